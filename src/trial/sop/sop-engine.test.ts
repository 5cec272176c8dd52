import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { getQcProgress, startQcRun } from '../qc/qc-runs.js';
import { registerQcWorkers, reviewTaskRun } from '../qc/workers.js';
import { listQueries } from '../queries.js';
import { createTrialStore } from '../store/trial-store.js';
import type { User } from '../../core/auth/users.js';
import type { TrialServices } from '../trial-services.js';
import { advanceTaskRun } from './engine.js';
import { getTaskRun } from './task-runs.js';
import { waitFor } from '../../testing/wait-for.js';

const SKILL = `
id: eligibility
name: Eligibility check
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
      - { id: consent-first, field: consent_date, logic: { date_on_or_before: [{ var: consent_date }, { var: enrollment_date }] }, message: "Consent after enrolment" }
    on_pass: soft
    on_fail: review
  soft:
    type: soft_instruction
    instruction: Judge whether the adverse event text is plausible for the recorded blood pressure.
    field: ae_text
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: A data manager confirms the violations before queries go to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
`;

describe.each(testEngines())('SOP runs on %s', (engine) => {
  let model: ScriptedModel;
  let webhook: http.Server;
  const notifications: any[] = [];
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  /** Coordinators of p1: the data manager who starts runs, and the site coordinator who answers queries. */
  const staff: Record<'alice' | 'dm' | 'site-crc', User> = {} as never;
  let workers: Awaited<ReturnType<typeof registerQcWorkers>>;

  beforeAll(async () => {
    webhook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        notifications.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
    // The soft node passes for every record that reaches it.
    model = await startScriptedModel([], { fallback: { reply: '{"passed": true, "reason": "plausible", "confidence": 0.9, "evidence": "SBP normal"}' } });
    const skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-skills-'));
    writeFileSync(path.join(skillsDir, 'eligibility.yaml'), SKILL);
    ctx = await buildTestContext({
      engine,
      startJobs: true,
      llmBaseUrl: model.baseURL,
      env: { SKILLS_DIR: skillsDir, REVIEW_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook` },
    });
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'p1', name: 'Trial one' });
    await store.replaceDictionary('p1', [
      { fieldName: 'record_id', formName: 'f', fieldType: 'text', label: 'ID', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'age', formName: 'f', fieldType: 'integer', label: 'Age', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'consent_date', formName: 'f', fieldType: 'date', label: 'Consent', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'enrollment_date', formName: 'f', fieldType: 'date', label: 'Enrolled', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'ae_text', formName: 'f', fieldType: 'text', label: 'AE', choices: [], validationMin: null, validationMax: null, required: false },
    ], 'test');
    await store.replaceEvents('p1', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    const row = (recordId: string, age: number, consent: string) => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, age, consent_date: consent, enrollment_date: '2025-03-10', ae_text: 'none' } });
    await store.importRecords('p1', [row('S1', 40, '2025-03-01'), row('S2', 90, '2025-03-01'), row('S3', 50, '2025-03-12'), row('S4', 16, '2025-03-20')], { actor: 'test' });
    trial = ctx.trial;
    for (const name of ['alice', 'dm', 'site-crc'] as const) {
      // The site answers queries; the data manager closes or reopens them.
      staff[name] = (await ctx.users.create({ name, role: name === 'dm' ? 'data_manager' : 'coordinator' })).user;
      await ctx.users.addMember('p1', staff[name].id);
    }
    workers = await registerQcWorkers({ ...trial.sop, jobs: ctx.jobs! }, { concurrency: 2, sweepIntervalMs: 500, staleMs: 1000 });
  });

  afterAll(async () => {
    workers?.stop();
    await ctx?.close();
    await model?.close();
    await new Promise((r) => webhook?.close(r));
  });

  it('checks every record once, opens one query per violation and suspends failing records for review', async () => {
    const started = await trial.qc.startQcRun(staff.alice, 'p1', 'eligibility');
    expect(started).toMatchObject({ total: 4, status: 'running' });
    const done = await waitFor(async () => {
      const p = await getQcProgress(ctx.db, started.id);
      return p && p.status !== 'running' ? p : undefined;
    }, 'the batch to finish');
    expect(done).toMatchObject({ completed: 1, suspended: 3, failed: 0, status: 'waiting_review' });

    const queries = await listQueries(ctx.db, { projectId: 'p1' });
    expect(queries.map((q) => `${q.recordId}:${q.ruleId}`).sort()).toEqual(['S2:age-range', 'S3:consent-first', 'S4:age-range', 'S4:consent-first']);
    // Every failing record waits for review, so none of its queries has reached the site yet.
    expect(queries.every((q) => q.status === 'held' && q.site === 'SITE-01')).toBe(true);

    await waitFor(async () => notifications.length >= 3, 'three review notifications');
    const s4 = notifications.find((n) => n.recordId === 'S4');
    expect(s4.text).toContain('record S4');
    expect(s4.text).toContain('age: Age must be 18-75');

    // Advancing a finished or suspended run again changes nothing: no duplicate queries or steps.
    const runs = await trial.qc.taskRuns(staff.alice, 'p1', { qcRunId: started.id });
    for (const run of runs) await advanceTaskRun(trial.sop, run.id);
    expect(await listQueries(ctx.db, { projectId: 'p1' })).toHaveLength(4);
    const s1 = runs.find((r) => r.recordId === 'S1')!;
    expect((await getTaskRun(ctx.db, s1.id))!.steps.map((s) => `${s.node}:${s.outcome}`)).toEqual(['hard:pass', 'soft:pass', 'end_ok:pass']);
  });

  it('resumes an approved run to completion and a rejected one to its reject end, exactly once', async () => {
    const suspended = await trial.qc.taskRuns(staff.dm, 'p1', { statuses: ['SUSPENDED'] });
    expect(suspended[0]!.reviewDescription).toBe('A data manager confirms the violations before queries go to the site.');
    const [approveRun, rejectRun] = [suspended.find((r) => r.recordId === 'S2')!, suspended.find((r) => r.recordId === 'S3')!];

    // Two reviewers approve at once: one wins, the other is told the run has moved on.
    const results = await Promise.allSettled([reviewTaskRun({ db: ctx.db, jobs: ctx.jobs! }, approveRun.id, 'approve', 'bob', 'confirmed'), reviewTaskRun({ db: ctx.db, jobs: ctx.jobs! }, approveRun.id, 'approve', 'carol', '')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(ClinAgentError.isInstance(loser.reason) && loser.reason.code).toBe('CONFLICT_STATE');

    await reviewTaskRun({ db: ctx.db, jobs: ctx.jobs! }, rejectRun.id, 'reject', 'bob', 'site corrected the date');
    const approved = await waitFor(async () => {
      const r = await getTaskRun(ctx.db, approveRun.id);
      return r?.status === 'COMPLETED' ? r : undefined;
    }, 'the approved run to complete');
    expect(approved.currentNode).toBe('end_confirmed');
    expect(approved.review).toMatchObject({ decision: 'approve' });
    const rejected = await waitFor(async () => {
      const r = await getTaskRun(ctx.db, rejectRun.id);
      return r?.status === 'COMPLETED' ? r : undefined;
    }, 'the rejected run to complete');
    expect(rejected.currentNode).toBe('end_rejected');

    await expect(reviewTaskRun({ db: ctx.db, jobs: ctx.jobs! }, approveRun.id, 'reject', 'dave')).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
    const trail = await createTrialStore(ctx.db).listAudit('p1', { entityType: 'task_run', entityId: approveRun.id });
    expect(trail.map((e) => e.action)).toEqual(['created', 'node:hard:fail', 'suspended', 'review_approved', 'completed']);
    expect(trail.find((e) => e.action === 'review_approved')).toMatchObject({ actor: expect.stringMatching(/bob|carol/) });
  });

  it('moves queries along their lifecycle with who and why in the audit trail', async () => {
    const [held] = await listQueries(ctx.db, { projectId: 'p1', recordId: 'S4', field: 'age' });
    expect(held).toMatchObject({ status: 'held', allowedTransitions: [] });
    // The site cannot answer what it has not been sent: S4 still waits for the data manager's review.
    await expect(trial.queries.transition(staff['site-crc'], 'p1', held!.id, 'answered', 'Age was 61, typo corrected')).rejects.toMatchObject({ code: 'CONFLICT_STATE', details: { status: 'held' } });
    const [s4Run] = (await trial.qc.taskRuns(staff.dm, 'p1', { statuses: ['SUSPENDED'] })).filter((run) => run.recordId === 'S4');
    await reviewTaskRun({ db: ctx.db, jobs: ctx.jobs! }, s4Run!.id, 'approve', 'dm', 'confirmed');
    await waitFor(async () => (await getTaskRun(ctx.db, s4Run!.id))?.status === 'COMPLETED', 'the approved S4 run to complete');

    const [query] = await listQueries(ctx.db, { projectId: 'p1', recordId: 'S4', field: 'age' });
    expect(query).toMatchObject({ id: held!.id, status: 'open', heldByTaskRunId: null });
    await expect(trial.queries.transition(staff['site-crc'], 'p1', query!.id, 'answered', '')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await trial.queries.transition(staff['site-crc'], 'p1', query!.id, 'answered', 'Age was 61, typo corrected');
    await expect(trial.queries.transition(staff['site-crc'], 'p1', query!.id, 'answered', 'again')).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
    await trial.queries.transition(staff.dm, 'p1', query!.id, 'reopened', 'source document says 16');
    await trial.queries.transition(staff['site-crc'], 'p1', query!.id, 'answered', 'Subject excluded');
    const closed = await trial.queries.transition(staff.dm, 'p1', query!.id, 'closed', '');
    expect(closed).toMatchObject({ status: 'closed', allowedTransitions: ['reopened'] });
    expect(query!.allowedTransitions).toEqual(['answered', 'closed']);
    const trail = await createTrialStore(ctx.db).listAudit('p1', { entityType: 'query', entityId: query!.id });
    expect(trail.map((e) => [e.action, e.actor])).toEqual([
      ['opened', 'sop:eligibility'],
      ['released', 'dm'],
      ['status:answered', 'site-crc'],
      ['status:reopened', 'dm'],
      ['status:answered', 'site-crc'],
      ['status:closed', 'dm'],
    ]);
  });

  it('reports violations by field, rule, site and severity and exports CSV and XLSX', async () => {
    const report = await trial.reports.violations(staff.dm, 'p1');
    expect(report.total).toBe(4);
    expect(report.byRule).toEqual([{ key: 'age-range', count: 2 }, { key: 'consent-first', count: 2 }]);
    expect(report.bySite).toEqual([{ key: 'SITE-01', count: 4 }]);
    const csv = await trial.reports.violationsCsv(staff.dm, 'p1');
    expect(csv.split('\n')[0]).toContain('"Record","Event","Site","Field","Rule"');
    expect(csv.trim().split('\n')).toHaveLength(5);
    const xlsx = await trial.reports.violationsXlsx(staff.dm, 'p1');
    expect(xlsx.subarray(0, 2).toString()).toBe('PK');
  });

  it('re-enqueues a run whose worker died mid-step and finishes it once', async () => {
    const [run] = await (await import('./task-runs.js')).createTaskRuns(ctx.db, { projectId: 'p1', skillId: 'eligibility', startNode: 'hard', recordIds: ['S1'], actor: 'test' });
    // A dead worker: it took the lease, then vanished without saving a step.
    const { taskRuns } = await import('../../core/db/schema/trial.js');
    const { eq } = await import('drizzle-orm');
    await ctx.db.update(taskRuns).set({ status: 'RUNNING', leaseOwner: 'dead-worker', leaseUntil: new Date(Date.now() - 1000), updatedAt: new Date(Date.now() - 5000) }).where(eq(taskRuns.id, run!.id));
    expect(await workers.sweep()).toBeGreaterThanOrEqual(1);
    const finished = await waitFor(async () => {
      const r = await getTaskRun(ctx.db, run!.id);
      return r?.status === 'COMPLETED' ? r : undefined;
    }, 'the orphaned run to finish');
    expect(finished.steps.map((s) => s.node)).toEqual(['hard', 'soft', 'end_ok']);
  });
});
