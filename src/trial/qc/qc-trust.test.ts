import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { queryRows } from '../../core/db/connect.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trialFields } from '../../core/db/schema/trial.js';
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { listQueries } from '../queries.js';
import { loadRecordContext } from '../sop/record-context.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import type { User } from '../../core/auth/users.js';
import type { TrialServices } from '../trial-services.js';
import { getQcProgress, type QcProgress } from './qc-runs.js';
import { registerQcWorkers } from './workers.js';

/**
 * The findings of issue 11 that a data manager meets in the first week: re-runs that duplicate queries, a model
 * failure filed as a site query, queries without their value, a project without events, a rejected review that
 * leaves its queries open, a rate-limited run that waits out its lease, a webhook that holds a worker.
 */

const RULES = `
      - { id: age-range, field: v1_arm_1.age, logic: { and: [{ ">=": [{ var: v1_arm_1.age }, 18] }, { "<=": [{ var: v1_arm_1.age }, 75] }] }, message: "Age must be 18-75" }
      - { id: sbp-range, field: v2_arm_1.sbp, logic: { or: [{ missing: [v2_arm_1.sbp] }, { "<=": [{ var: v2_arm_1.sbp }, 200] }] }, message: "SBP above 200", severity: warning }`;

function reviewSkill(id: string, name: string, extra: string): string {
  return `
id: ${id}
name: ${name}
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:${RULES}
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: Confirm before the site sees it.
    on_approve: end_confirmed
    on_reject: end_dismissed${extra}
`;
}

const SKILLS: Record<string, string> = {
  'checks-direct': `
id: checks-direct
name: Checks without review
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:${RULES}
    on_pass: end_ok
    on_fail: end_flagged
`,
  'checks-review': reviewSkill('checks-review', 'Checks with review (reject cancels)', ''),
  'checks-review-close': reviewSkill('checks-review-close', 'Checks with review (reject closes)', '\n    on_reject_queries: close'),
  'ae-plausible': `
id: ae-plausible
name: AE plausibility
start_node: soft
nodes:
  soft:
    type: soft_instruction
    instruction: Judge whether the adverse event text is plausible for the recorded blood pressure.
    field: ae_text
    max_retries: 2
    on_pass: end_ok
    on_fail: end_flagged
`,
  'constructor-age': `
id: constructor-age
name: Rules over events named like Object members
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: adult, field: constructor.age, logic: { ">=": [{ var: constructor.age }, 18] }, message: "Minor" }
      - { id: code-format, field: constructor.code, logic: { "==": [{ var: constructor.code }, "X-1"] }, message: "Screening code must be X-1" }
    on_pass: end_ok
    on_fail: end_flagged
`,
};

const field = (fieldName: string, fieldType: 'text' | 'integer' | 'date' = 'text') => ({ fieldName, formName: 'f', fieldType, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });

/** Who the soft rule sees in its prompt; identifiers must never be among them. */
const IDENTIFIER_VALUES = ['张三丰', '13800138000'];

describe.each(testEngines())('QC a data manager can trust, on %s', (engine) => {
  let model: ScriptedModel;
  let webhook: http.Server;
  const webhookCalls: string[] = [];
  const delivered: string[] = [];
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  /** The data manager: a coordinator of every project here. */
  let dm: User;
  let workers: Awaited<ReturnType<typeof registerQcWorkers>>;
  let skillsDir: string | undefined;

  const promptOf = (request: RecordedRequest) => JSON.stringify(request.body?.messages ?? []);
  const modelAnswer = (request: RecordedRequest) => {
    const prompt = promptOf(request);
    if (prompt.includes('GARBAGE-AE')) return { reply: 'I am not sure, it depends.' };
    if (prompt.includes('OUTAGE-AE')) return { status: 500, body: { error: { message: 'upstream model server down', type: 'server_error' } } };
    if (prompt.includes('RATE-LIMITED-AE') && !rateLimitedOnce) {
      rateLimitedOnce = true;
      return { status: 429, body: { error: { message: 'rate limited', type: 'rate_limit' } } };
    }
    return { reply: '{"passed": true, "reason": "plausible", "confidence": 0.9, "evidence": "normal"}' };
  };
  let rateLimitedOnce = false;

  async function runToEnd(skillId: string, recordIds: string[], projectId = 'p1', settled: (p: QcProgress) => boolean = (p) => p.pending + p.running === 0): Promise<QcProgress> {
    const started = await trial.qc.startQcRun(dm, projectId, skillId, recordIds);
    return waitFor(async () => {
      const p = await getQcProgress(ctx.db, started.id);
      return p && settled(p) ? p : undefined;
    }, `QC run of ${skillId} to settle`, 60_000);
  }

  beforeAll(async () => {
    // The first notice for W1 hangs past the webhook timeout; every other call is answered at once.
    webhook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { recordId } = JSON.parse(body) as { recordId: string };
        webhookCalls.push(recordId);
        if (recordId === 'W1' && webhookCalls.filter((r) => r === 'W1').length === 1) return; // never answered
        delivered.push(recordId);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
    model = await startScriptedModel([], { respond: modelAnswer });
    skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-trust-'));
    for (const [id, text] of Object.entries(SKILLS)) writeFileSync(path.join(skillsDir, `${id}.yaml`), text);
    ctx = await buildTestContext({
      engine,
      startJobs: true,
      llmBaseUrl: model.baseURL,
      env: {
        SKILLS_DIR: skillsDir,
        REVIEW_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`,
        // A lease far longer than any test: a rate-limited run that kept it would never finish here.
        QC_LEASE_MS: '600000',
        LLM_MAX_RETRIES: '0',
      },
    });
    const store = createTrialStore(ctx.db);

    await store.ensureProject({ id: 'p1', name: 'Longitudinal' });
    await store.replaceDictionary('p1', [field('record_id'), field('patient_name'), field('phone'), field('age', 'integer'), field('sbp', 'integer'), field('ae_text')], 'test');
    await ctx.db.update(trialFields).set({ identifier: true }).where(and(eq(trialFields.projectId, 'p1'), eq(trialFields.fieldName, 'patient_name')));
    await ctx.db.update(trialFields).set({ identifier: true }).where(and(eq(trialFields.projectId, 'p1'), eq(trialFields.fieldName, 'phone')));
    await store.replaceEvents('p1', [
      { eventName: 'v1_arm_1', label: 'V1', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
      { eventName: 'v2_arm_1', label: 'V2', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
    ], 'test');
    const subject = (recordId: string, age: number, sbp: number, ae = 'none'): TrialRecord[] => [
      { recordId, eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: recordId, patient_name: IDENTIFIER_VALUES[0]!, phone: IDENTIFIER_VALUES[1]!, age, ae_text: ae } },
      { recordId, eventName: 'v2_arm_1', site: 'SITE-01', data: { record_id: recordId, sbp } },
    ];
    await store.importRecords('p1', [
      ...subject('S1', 40, 120), ...subject('S2', 17, 120), ...subject('S3', 50, 250),
      ...subject('R1', 16, 120), ...subject('R2', 16, 120), ...subject('R3', 16, 120), ...subject('W1', 16, 120),
      ...subject('G1', 40, 120, 'GARBAGE-AE'), ...subject('G2', 40, 120, 'GARBAGE-AE'), ...subject('L1', 40, 120, 'RATE-LIMITED-AE'),
      ...subject('O1', 40, 120, 'OUTAGE-AE-1'), ...subject('O2', 40, 120, 'OUTAGE-AE-2'),
    ], { actor: 'test' });

    await store.ensureProject({ id: 'flat', name: 'No events' });
    await store.replaceDictionary('flat', [field('record_id'), field('age', 'integer'), field('ae_text')], 'test');
    await store.importRecords('flat', [{ recordId: 'F1', eventName: '', site: '', data: { record_id: 'F1', age: 33, ae_text: 'FLAT-UNIQUE-AE-TEXT' } }], { actor: 'test' });

    await store.ensureProject({ id: 'proto', name: 'Odd event names' });
    await store.replaceDictionary('proto', [field('record_id'), field('age', 'integer'), field('code')], 'test');
    await store.replaceEvents('proto', [
      { eventName: '__proto__', label: 'P', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
      { eventName: 'constructor', label: 'C', dayOffset: 7, windowBefore: 0, windowAfter: 0 },
    ], 'test');
    await store.importRecords('proto', [
      { recordId: 'X1', eventName: '__proto__', site: '', data: { record_id: 'X1', age: 30 } },
      { recordId: 'X1', eventName: 'constructor', site: '', data: { record_id: 'X1', age: 12, code: '13900139000' } },
    ], { actor: 'test' });

    trial = ctx.trial;
    dm = (await ctx.users.create({ name: 'dm', role: 'coordinator' })).user;
    for (const projectId of ['p1', 'flat', 'proto']) await ctx.users.addMember(projectId, dm.id);
    // Outages are waited out as in production, on a shorter clock: three attempts, 100 ms then 200 ms apart.
    workers = await registerQcWorkers({ ...trial.sop, jobs: ctx.jobs!, modelOutage: { attempts: 3, firstDelayMs: 100 } }, { concurrency: 4, sweepIntervalMs: 500, staleMs: 1000 });
  }, 120_000);

  afterAll(async () => {
    workers?.stop();
    await ctx?.close();
    await model?.close();
    webhook?.closeAllConnections();
    await new Promise((r) => webhook?.close(r));
    if (skillsDir) rmSync(skillsDir, { recursive: true, force: true });
  });

  it('keeps one query per finding across re-runs, 50 of them at once included, each with its value and event', async () => {
    for (let i = 0; i < 3; i++) await runToEnd('checks-direct', ['S1', 'S2', 'S3']);
    const started = await Promise.all(Array.from({ length: 50 }, () => trial.qc.startQcRun(dm, 'p1', 'checks-direct', ['S1', 'S2', 'S3'])));
    await waitFor(async () => {
      const all = await Promise.all(started.map((s) => getQcProgress(ctx.db, s.id)));
      return all.every((p) => p!.status === 'completed');
    }, '50 concurrent runs to complete', 90_000);

    const queries = await listQueries(ctx.db, { projectId: 'p1', recordId: undefined });
    const mine = queries.filter((q) => ['S1', 'S2', 'S3'].includes(q.recordId));
    expect(mine.map((q) => ({ record: q.recordId, event: q.eventName, rule: q.ruleId, value: q.value, status: q.status, held: q.heldByTaskRunId }))).toEqual(
      expect.arrayContaining([
        { record: 'S2', event: 'v1_arm_1', rule: 'age-range', value: 17, status: 'open', held: null },
        { record: 'S3', event: 'v2_arm_1', rule: 'sbp-range', value: 250, status: 'open', held: null },
      ]),
    );
    expect(mine).toHaveLength(2);
  });

  it('closes a query whose finding no longer fires, and reopens it when it fires again', async () => {
    const store = createTrialStore(ctx.db);
    const [query] = await listQueries(ctx.db, { projectId: 'p1', recordId: 'S2' });
    await store.importRecords('p1', [{ recordId: 'S2', eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: 'S2', patient_name: IDENTIFIER_VALUES[0]!, phone: IDENTIFIER_VALUES[1]!, age: 19, ae_text: 'none' } }], { actor: 'site' });
    const fixedRun = await runToEnd('checks-direct', ['S2']);
    const [marked] = await listQueries(ctx.db, { projectId: 'p1', recordId: 'S2' });
    expect(marked).toMatchObject({ id: query!.id, status: 'closed', noLongerFires: { qcRunId: fixedRun.id } });

    await store.importRecords('p1', [{ recordId: 'S2', eventName: 'v1_arm_1', site: 'SITE-01', data: { record_id: 'S2', patient_name: IDENTIFIER_VALUES[0]!, phone: IDENTIFIER_VALUES[1]!, age: 15, ae_text: 'none' } }], { actor: 'site' });
    await runToEnd('checks-direct', ['S2']);
    const after = await listQueries(ctx.db, { projectId: 'p1', recordId: 'S2' });
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: query!.id, status: 'reopened', value: 15, noLongerFires: null });
    const trail = (await trial.records.audit(dm, 'p1', { entityType: 'query', entityId: query!.id })).map((e) => e.action);
    expect(trail).toEqual(expect.arrayContaining(['opened', 'status:closed', 'status:reopened']));
  });

  it('holds queries back for review: approve sends them, reject cancels or closes them as the skill says', async () => {
    const waiting = await runToEnd('checks-review', ['R1', 'R2'], 'p1', (p) => p.status === 'waiting_review');
    expect(waiting).toMatchObject({ status: 'waiting_review', suspended: 2, completed: 0 });
    const closeRun = await runToEnd('checks-review-close', ['R3'], 'p1', (p) => p.status === 'waiting_review');

    const held = await listQueries(ctx.db, { projectId: 'p1', recordId: 'R1' });
    expect(held).toHaveLength(1);
    expect(held[0]!.heldByTaskRunId).not.toBeNull();
    expect(held[0]!.status).toBe('held');

    const runs = await trial.qc.taskRuns(dm, 'p1', { qcRunId: waiting.id, statuses: ['SUSPENDED'] });
    const byRecord = new Map(runs.map((r) => [r.recordId, r]));
    await trial.qc.review(dm, byRecord.get('R1')!.id, 'approve', 'confirmed');
    await trial.qc.review(dm, byRecord.get('R2')!.id, 'reject', 'age was entered in months');
    const [r3run] = await trial.qc.taskRuns(dm, 'p1', { qcRunId: closeRun.id, statuses: ['SUSPENDED'] });
    await trial.qc.review(dm, r3run!.id, 'reject', 'protocol waiver on file');

    const done = await waitFor(async () => {
      const p = await getQcProgress(ctx.db, waiting.id);
      return p?.status === 'completed' ? p : undefined;
    }, 'the batch to complete once both reviews are decided');
    expect(done).toMatchObject({ completed: 2, suspended: 0 });
    await waitFor(async () => (await getQcProgress(ctx.db, closeRun.id))?.status === 'completed', 'the closing batch to complete');

    const status = async (recordId: string) => (await listQueries(ctx.db, { projectId: 'p1', recordId })).map((q) => ({ status: q.status, held: q.heldByTaskRunId }));
    expect(await status('R1')).toEqual([{ status: 'open', held: null }]);
    expect(await status('R2')).toEqual([{ status: 'cancelled', held: null }]);
    expect(await status('R3')).toEqual([{ status: 'closed', held: null }]);
  });

  it('routes a soft rule without a usable verdict to a person, never to the site, and keeps identifiers out of every prompt', async () => {
    const progress = await runToEnd('ae-plausible', ['G1', 'G2', 'S1'], 'p1', (p) => p.status === 'waiting_review');
    expect(progress).toMatchObject({ suspended: 2, completed: 1 });
    expect(await listQueries(ctx.db, { projectId: 'p1', recordId: 'G1' })).toEqual([]);
    expect(await listQueries(ctx.db, { projectId: 'p1', recordId: 'G2' })).toEqual([]);

    const runs = await trial.qc.taskRuns(dm, 'p1', { qcRunId: progress.id, statuses: ['SUSPENDED'] });
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run.reviewRequest).toMatchObject({ kind: 'soft_rule_unresolved', node: 'soft' });
      expect(run.reviewRequest!.reason).toMatch(/no usable verdict after 2 attempts/);
      expect(run.reviewDescription).toMatch(/could not judge/);
    }
    const g1 = runs.find((r) => r.recordId === 'G1')!;
    const g2 = runs.find((r) => r.recordId === 'G2')!;
    await trial.qc.review(dm, g1.id, 'approve', 'text is fine');
    await trial.qc.review(dm, g2.id, 'reject', 'AE text contradicts the SBP');
    await waitFor(async () => (await getQcProgress(ctx.db, progress.id))?.status === 'completed', 'the soft batch to complete');
    expect(await listQueries(ctx.db, { projectId: 'p1', recordId: 'G1' })).toEqual([]);
    const [raised] = await listQueries(ctx.db, { projectId: 'p1', recordId: 'G2' });
    expect(raised).toMatchObject({ status: 'open', field: 'ae_text', ruleId: 'soft', heldByTaskRunId: null });
    expect(raised!.message).toContain('AE text contradicts the SBP');

    const prompts = model.requests.map(promptOf);
    expect(prompts.some((p) => p.includes('GARBAGE-AE'))).toBe(true);
    for (const value of IDENTIFIER_VALUES) expect(prompts.filter((p) => p.includes(value))).toEqual([]);
    const spanText = JSON.stringify(await queryRows(ctx.db, sql`SELECT input::text || coalesce(output::text, '') AS body FROM spans`));
    for (const value of IDENTIFIER_VALUES) expect(spanText).not.toContain(value);
  });

  it('sends a record of a project without events once, and treats events named __proto__ or constructor as data', async () => {
    await runToEnd('ae-plausible', ['F1'], 'flat');
    const prompt = model.requests.map(promptOf).find((p) => p.includes('FLAT-UNIQUE-AE-TEXT'))!;
    expect(prompt.split('FLAT-UNIQUE-AE-TEXT')).toHaveLength(2);
    expect(prompt).not.toContain('\\"\\":');

    const context = await loadRecordContext(ctx.db, 'proto', 'X1');
    expect(Object.getPrototypeOf(context.data)).toBeNull();
    expect(Object.keys(context.data)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    expect((context.data['__proto__'] as { age: number }).age).toBe(30);
    const progress = await runToEnd('constructor-age', ['X1'], 'proto');
    expect(progress.completed).toBe(1);
    const queries = await listQueries(ctx.db, { projectId: 'proto' });
    expect(queries.find((q) => q.ruleId === 'adult')).toMatchObject({ eventName: 'constructor', value: 12 });
    // A text value that looks like a number is stored as the text it is, not as the number 13900139000.
    expect(queries.find((q) => q.ruleId === 'code-format')).toMatchObject({ eventName: 'constructor', value: '13900139000' });
  });

  it('lets a rate-limited run continue after a short wait instead of waiting out its lease', async () => {
    const progress = await runToEnd('ae-plausible', ['L1'], 'p1', (p) => p.completed === 1);
    expect(rateLimitedOnce).toBe(true);
    const [run] = await trial.qc.taskRuns(dm, 'p1', { qcRunId: progress.id });
    expect(run).toMatchObject({ status: 'COMPLETED', leaseOwner: null });
    expect(run!.steps.map((step) => step.type)).toEqual(['model_unavailable', 'soft_instruction', 'end']);
    expect(progress).toMatchObject({ notChecked: 0, summary: null });
  });

  it('says plainly which records were not checked when the model is down, after a bounded number of calls, never "completed"', async () => {
    const progress = await runToEnd('ae-plausible', ['O1', 'O2', 'S1'], 'p1', (p) => p.status !== 'running');
    expect(progress).toMatchObject({ status: 'failed', completed: 1, failed: 2, notChecked: 2, summary: '2 of 3 records not checked because the model was unavailable. Run QC again for them once it is back.' });
    // Three attempts per record, one call each (no client retries here): not a call a second for as long as the outage lasts.
    for (const ae of ['OUTAGE-AE-1', 'OUTAGE-AE-2']) expect(model.requests.filter((r) => promptOf(r).includes(ae))).toHaveLength(3);
    const failed = await trial.qc.taskRuns(dm, 'p1', { qcRunId: progress.id, statuses: ['FAILED'] });
    for (const run of failed) {
      expect(run.error).toMatch(/^Not done: the model was unavailable on all 3 attempts \(The language model service failed \(HTTP 500\)/);
      expect(run.error).not.toContain(model.baseURL);
      expect(await listQueries(ctx.db, { projectId: 'p1', recordId: run.recordId })).toEqual([]);
    }
    const trail = (await trial.records.audit(dm, 'p1', { entityType: 'qc_run', entityId: progress.id })).map((e) => e.action);
    expect(trail).toContain('failed');
  });

  it('sends review notices as jobs: a hanging webhook is retried and never holds up the run', async () => {
    // The batch reads "waiting for review" without waiting for the webhook, which hangs on the first notice.
    const progress = await runToEnd('checks-review', ['W1'], 'p1', (p) => p.status === 'waiting_review');
    await waitFor(async () => delivered.includes('W1'), 'the W1 notice delivered on a retry after the hung attempt', 60_000);
    expect(webhookCalls.filter((r) => r === 'W1')).toHaveLength(2);
    const [run] = await trial.qc.taskRuns(dm, 'p1', { qcRunId: progress.id, statuses: ['SUSPENDED'] });
    expect(run!.recordId).toBe('W1');
    await trial.qc.review(dm, run!.id, 'approve', '');
  });
});
