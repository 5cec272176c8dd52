import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../../http/server.js';
import { registerWorkers } from '../../workers.js';
import { listQueries } from '../queries.js';
import { getQcProgress, listTaskRuns, startQcRun } from '../qc/qc-runs.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';
import { getTaskRun } from './task-runs.js';

const SKILL = `
id: age-review
name: Age check with review
start_node: ages
nodes:
  ages:
    type: hard_rule
    rules:
      - { id: age-range, field: age, logic: { and: [{ ">=": [{ var: age }, 18] }, { "<=": [{ var: age }, 75] }] }, message: "Age must be 18-75" }
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: A data manager confirms the violation before the query goes to the site.
    on_approve: end_confirmed
    on_reject: end_rejected
`;

const row = (recordId: string, age: number): TrialRecord => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, age } });

/**
 * A reviewer decides on what the console showed. If the record is imported again with another value between
 * the moment a run suspended and the decision, the decision is refused (409) and the run waits for a fresh
 * review instead of releasing a query about a value that is no longer there.
 */
describe.each(testEngines())('review decisions bound to the data shown on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let workers: { stop(): void };
  let auth: { authorization: string };
  const skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-review-binding-'));

  beforeAll(async () => {
    writeFileSync(path.join(skillsDir, 'age-review.yaml'), SKILL);
    ctx = await buildTestContext({ engine, startJobs: true, env: { SKILLS_DIR: skillsDir, QC_SWEEP_INTERVAL_MS: '500', QC_STALE_MS: '1000' } });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'rb', name: 'Review binding' });
    await store.replaceDictionary('rb', [
      { fieldName: 'record_id', formName: 'f', fieldType: 'text', label: 'ID', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'age', formName: 'f', fieldType: 'integer', label: 'Age', choices: [], validationMin: null, validationMax: null, required: true },
    ], 'test');
    await store.replaceEvents('rb', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    await store.importRecords('rb', [row('R1', 90), row('R2', 95)], { actor: 'test' });
    const admin = await ctx.users.create({ name: 'dm-admin', role: 'admin' });
    auth = { authorization: `Bearer ${admin.token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    rmSync(skillsDir, { recursive: true, force: true });
  });

  async function suspendedRuns() {
    const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rb', skill: ctx.skills.get('age-review'), actor: 'dm' });
    await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'waiting_review', 'both runs to wait for review');
    const runs = await listTaskRuns(ctx.db, { projectId: 'rb', qcRunId: started.id, statuses: ['SUSPENDED'] });
    return { r1: runs.find((r) => r.recordId === 'R1')!, r2: runs.find((r) => r.recordId === 'R2')! };
  }

  const review = (id: string, decision: 'approve' | 'reject') =>
    app.inject({ method: 'POST', url: `/api/iit/task-runs/${id}/review`, headers: auth, payload: { decision, comment: 'checked' } });

  it('refuses an approval after the record changed, keeps the run waiting for a fresh review, then accepts the new approval', async () => {
    const { r1, r2 } = await suspendedRuns();
    const shownHash = (r1.reviewRequest as { dataHash?: string }).dataHash;
    expect(shownHash).toMatch(/^[0-9a-f]{64}$/);

    // The site corrects the age in the EDC and the export is imported again, after the reviewer opened the run.
    await createTrialStore(ctx.db).importRecords('rb', [row('R1', 91)], { actor: 'site' });
    const refused = await review(r1.id, 'approve');

    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'CONFLICT_STATE', details: { taskRunId: r1.id, reason: 'review_data_changed' } });
    expect(refused.json().message).toMatch(/record R1 changed after the review was shown.*approve was not applied.*waiting for a fresh review/);
    const waiting = (await getTaskRun(ctx.db, r1.id))!;
    expect(waiting).toMatchObject({ status: 'SUSPENDED', currentNode: 'review', review: null });
    const refreshedHash = (waiting.reviewRequest as { dataHash?: string }).dataHash;
    expect(refreshedHash).toMatch(/^[0-9a-f]{64}$/);
    expect(refreshedHash).not.toBe(shownHash);
    expect(waiting.steps.at(-1)).toMatchObject({ type: 'review', outcome: 'refreshed' });
    // Its query is still held back: nothing reached the site on the refused decision.
    const [held] = await listQueries(ctx.db, { projectId: 'rb', recordId: 'R1' });
    expect(held).toMatchObject({ status: 'open', heldByTaskRunId: r1.id });

    // The other run's record did not change: its decision goes through at once.
    expect((await review(r2.id, 'reject')).statusCode).toBe(200);

    // The reviewer reloads, looks at the record as it is now, and approves again.
    const accepted = await review(r1.id, 'approve');
    expect(accepted.statusCode, accepted.body).toBe(200);
    const done = await waitFor(async () => {
      const run = await getTaskRun(ctx.db, r1.id);
      return run?.status === 'COMPLETED' ? run : undefined;
    }, 'the approved run to complete');
    expect(done.currentNode).toBe('end_confirmed');
    const [released] = await listQueries(ctx.db, { projectId: 'rb', recordId: 'R1' });
    expect(released).toMatchObject({ status: 'open', heldByTaskRunId: null });
    const trail = await createTrialStore(ctx.db).listAudit('rb', { entityType: 'task_run', entityId: r1.id });
    expect(trail.map((e) => e.action)).toEqual(['created', 'node:ages:fail', 'suspended', 'review_refreshed', 'review_approved', 'completed']);
    expect(trail.find((e) => e.action === 'review_refreshed')).toMatchObject({ actor: 'dm-admin', oldValue: { dataHash: shownHash }, newValue: { dataHash: refreshedHash } });
  });

  it('does not count an import that changes nothing as a change of the record', async () => {
    const { r1 } = await suspendedRuns();
    await createTrialStore(ctx.db).importRecords('rb', [row('R1', 91), row('R2', 95)], { actor: 'site' });
    const accepted = await review(r1.id, 'approve');
    expect(accepted.statusCode, accepted.body).toBe(200);
  });
});
