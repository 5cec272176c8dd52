import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
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
 * the moment a run suspended and the decision, the decision is refused (409) and the run checks the record
 * again: it asks again if the finding still holds, and a query about a value that is no longer there is
 * withdrawn, never sent.
 */
describe.each(testEngines())('review decisions bound to the data shown on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  let auth: { authorization: string };

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'review-binding', skills: { 'age-review': SKILL }, env: { QC_SWEEP_INTERVAL_MS: '500', QC_STALE_MS: '1000' } });
    ({ ctx, app } = server);
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
    await server?.close();
  });

  async function suspendedRuns() {
    const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rb', skill: ctx.skills.get('age-review'), actor: 'dm' });
    await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'waiting_review', 'both runs to wait for review');
    const runs = await listTaskRuns(ctx.db, { projectId: 'rb', qcRunId: started.id, statuses: ['SUSPENDED'] });
    return { r1: runs.find((r) => r.recordId === 'R1')!, r2: runs.find((r) => r.recordId === 'R2')! };
  }

  const review = (id: string, decision: 'approve' | 'reject', dataHash?: string) =>
    app.inject({ method: 'POST', url: `/api/iit/task-runs/${id}/review`, headers: auth, payload: { decision, comment: 'checked', ...(dataHash ? { dataHash } : {}) } });

  const waitForStatus = (id: string, status: string) =>
    waitFor(async () => {
      const run = await getTaskRun(ctx.db, id);
      return run?.status === status ? run : undefined;
    }, `task run ${id} to be ${status}`);

  it('refuses an approval after the record changed, checks the record again, asks again about the new value, then accepts', async () => {
    const { r1, r2 } = await suspendedRuns();
    const shownHash = (r1.reviewRequest as { dataHash?: string }).dataHash;
    expect(shownHash).toMatch(/^[0-9a-f]{64}$/);

    // The site corrects the age in the EDC (still out of range) and the export is imported again, after the reviewer opened the run.
    await createTrialStore(ctx.db).importRecords('rb', [row('R1', 91)], { actor: 'site' });
    const refused = await review(r1.id, 'approve', shownHash);

    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'CONFLICT_STATE', details: { taskRunId: r1.id, reason: 'review_data_changed', redo: true } });
    expect(refused.json().message).toMatch(/record R1 changed after the review was shown.*approve was not applied.*checking the current data again/);

    // The run checks the record as it is now and, as 91 still breaks the rule, asks again, about 91.
    const again = await waitForStatus(r1.id, 'SUSPENDED');
    const newHash = (again.reviewRequest as { dataHash?: string }).dataHash;
    expect(newHash).toMatch(/^[0-9a-f]{64}$/);
    expect(newHash).not.toBe(shownHash);
    expect(again.steps.map((s) => `${String(s.node)}:${String(s.outcome)}`)).toEqual(['ages:fail', 'review:suspended', 'review:redo', 'ages:fail', 'review:suspended']);
    // Its query is still held back, now with the current value: nothing reached the site on the refused decision.
    const [held] = await listQueries(ctx.db, { projectId: 'rb', recordId: 'R1' });
    expect(held).toMatchObject({ status: 'held', heldByTaskRunId: r1.id, value: 91 });

    // The other run's record did not change: its decision goes through at once.
    expect((await review(r2.id, 'reject')).statusCode).toBe(200);

    // A second click from the page that still shows the old version is refused too, not applied to data nobody saw.
    const stalePage = await review(r1.id, 'approve', shownHash);
    expect(stalePage.statusCode).toBe(409);
    expect(stalePage.json()).toMatchObject({ code: 'CONFLICT_STATE', details: { reason: 'review_data_changed' } });

    // The reviewer reloads, looks at the record as it is now, and approves again.
    const accepted = await review(r1.id, 'approve', newHash);
    expect(accepted.statusCode, accepted.body).toBe(200);
    const done = await waitForStatus(r1.id, 'COMPLETED');
    expect(done.currentNode).toBe('end_confirmed');
    const [released] = await listQueries(ctx.db, { projectId: 'rb', recordId: 'R1' });
    expect(released).toMatchObject({ status: 'open', heldByTaskRunId: null, value: 91 });
    const trail = await createTrialStore(ctx.db).listAudit('rb', { entityType: 'task_run', entityId: r1.id });
    expect(trail.map((e) => e.action)).toEqual(['created', 'node:ages:fail', 'suspended', 'review_redone', 'node:ages:fail', 'suspended', 'review_approved', 'completed']);
    expect(trail.find((e) => e.action === 'review_redone')).toMatchObject({ actor: 'dm-admin', oldValue: { status: 'SUSPENDED', node: 'review', dataHash: shownHash }, newValue: { status: 'RUNNING', node: 'ages' } });
  });

  it('never sends a finding that no longer holds: subject 220 re-imported from age 4 to 44, approved twice', async () => {
    await createTrialStore(ctx.db).importRecords('rb', [row('220', 4)], { actor: 'site' });
    const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rb', skill: ctx.skills.get('age-review'), actor: 'dm', recordIds: ['220'] });
    await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'waiting_review', 'the run of 220 to wait for review');
    const [run] = await listTaskRuns(ctx.db, { projectId: 'rb', qcRunId: started.id, statuses: ['SUSPENDED'] });
    const [held] = await listQueries(ctx.db, { projectId: 'rb', recordId: '220' });
    expect(held).toMatchObject({ status: 'held', heldByTaskRunId: run!.id, value: 4, message: 'Age must be 18-75' });

    // The site corrects the typo: 44, not 4. The reviewer, on the page loaded before, clicks approve twice.
    await createTrialStore(ctx.db).importRecords('rb', [row('220', 44)], { actor: 'site' });
    const first = await review(run!.id, 'approve');
    expect(first.statusCode).toBe(409);
    const second = await review(run!.id, 'approve');
    expect(second.statusCode).toBe(409);

    // The run checked 44, which passes: it ends without review and its query about 4 is withdrawn, never sent.
    const done = await waitForStatus(run!.id, 'COMPLETED');
    expect(done.currentNode).toBe('end_ok');
    const queries = await listQueries(ctx.db, { projectId: 'rb', recordId: '220' });
    expect(queries).toHaveLength(1);
    expect(queries[0]).toMatchObject({ id: held!.id, status: 'cancelled', heldByTaskRunId: null });
    const queryTrail = await createTrialStore(ctx.db).listAudit('rb', { entityType: 'query', entityId: held!.id });
    expect(queryTrail.map((e) => e.action)).toEqual(['opened', 'status:cancelled']);
    expect(queryTrail.at(-1)!.reason).toMatch(/withdrawn before it reached the site/);
    expect(queryTrail.map((e) => e.action)).not.toContain('released');
  });

  it('does not count an import that changes nothing as a change of the record', async () => {
    // Records of their own: R1 and R2 were decided above, so a run on unchanged data does not ask about them again (issue 32).
    await createTrialStore(ctx.db).importRecords('rb', [row('N1', 92), row('N2', 96)], { actor: 'site' });
    const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rb', skill: ctx.skills.get('age-review'), actor: 'dm', recordIds: ['N1', 'N2'] });
    await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'waiting_review', 'the runs of N1 and N2 to wait for review');
    const runs = await listTaskRuns(ctx.db, { projectId: 'rb', qcRunId: started.id, statuses: ['SUSPENDED'] });
    await createTrialStore(ctx.db).importRecords('rb', [row('N1', 92), row('N2', 96)], { actor: 'site' });
    const accepted = await review(runs.find((r) => r.recordId === 'N1')!.id, 'approve');
    expect(accepted.statusCode, accepted.body).toBe(200);
  });

  it('keeps the queries of a run waiting for review held: nobody answers or closes them, approve sends them open, reject withdraws them, the report says held', async () => {
    await createTrialStore(ctx.db).importRecords('rb', [row('H1', 10), row('H2', 11)], { actor: 'site' });
    const started = await startQcRun({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rb', skill: ctx.skills.get('age-review'), actor: 'dm', recordIds: ['H1', 'H2'] });
    await waitFor(async () => (await getQcProgress(ctx.db, started.id))?.status === 'waiting_review', 'the runs of H1 and H2 to wait for review');
    const runs = await listTaskRuns(ctx.db, { projectId: 'rb', qcRunId: started.id, statuses: ['SUSPENDED'] });
    const [h1, h2] = ['H1', 'H2'].map((id) => runs.find((r) => r.recordId === id)!);
    const api = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url: `/api/iit/projects/rb${url}`, headers: auth, ...(payload ? { payload } : {}) });
    const queryOf = async (recordId: string) => (await api('GET', `/queries?recordId=${recordId}`)).json().queries[0];

    const held = await queryOf('H1');
    expect(held).toMatchObject({ status: 'held', heldByTaskRunId: h1!.id, allowedTransitions: [] });
    const page = (await api('GET', '/queries?status=held&sort=status')).json();
    // N2 of the test before still waits for its review too.
    expect(page.queries.map((q: { recordId: string }) => q.recordId).sort()).toEqual(['H1', 'H2', 'N2']);
    expect(page).toMatchObject({ total: 3, counts: { held: 3 } });
    expect((await api('GET', '/queries?status=open&recordId=H1')).json()).toMatchObject({ total: 0, queries: [] });

    for (const to of ['answered', 'closed'] as const) {
      const refused = await api('POST', `/queries/${held.id}/transition`, { to, comment: 'corrected at the site' });
      expect(refused.statusCode, to).toBe(409);
      expect(refused.json()).toMatchObject({ code: 'CONFLICT_STATE', details: { status: 'held', heldByTaskRunId: h1!.id } });
      expect(refused.json().message).toMatch(/held for the data manager's review.*has not reached the site.*Approve that run's review/);
    }
    const bulk = (await api('POST', '/queries/bulk-close', { queryIds: [held.id], reason: 'no action needed' })).json();
    expect(bulk).toMatchObject({ closed: 0, skipped: [{ id: held.id, status: 'held' }] });
    expect((await api('POST', '/queries/bulk-close', { filter: { recordId: 'H1' }, reason: 'no action needed' })).json()).toMatchObject({ closed: 0 });

    const csvStatus = async (recordId: string) => {
      const lines = (await api('GET', '/report?format=csv')).body.split('\n');
      return lines.find((line) => line.startsWith(`"${recordId}"`))?.split('","')[6];
    };
    expect(await csvStatus('H1')).toBe('held');
    const xlsx = await api('GET', '/report?format=xlsx');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('Violations')!;
    const header = (sheet.getRow(1).values as unknown[]).map(String);
    const xlsxStatus: string[] = [];
    sheet.eachRow((line, n) => {
      if (n > 1 && line.getCell(header.indexOf('Record')).value === 'H2') xlsxStatus.push(String(line.getCell(header.indexOf('Query status')).value));
    });
    expect(xlsxStatus).toEqual(['held']);

    expect((await review(h1!.id, 'approve')).statusCode).toBe(200);
    expect((await review(h2!.id, 'reject')).statusCode).toBe(200);
    await waitForStatus(h1!.id, 'COMPLETED');
    await waitForStatus(h2!.id, 'COMPLETED');
    expect(await queryOf('H1')).toMatchObject({ id: held.id, status: 'open', heldByTaskRunId: null, allowedTransitions: ['answered', 'closed'] });
    // Rejected as before: withdrawn before it reached the site.
    expect(await queryOf('H2')).toMatchObject({ status: 'cancelled', heldByTaskRunId: null });
    expect(await csvStatus('H1')).toBe('open');
    expect(await csvStatus('H2')).toBe('cancelled');

    const answered = await api('POST', `/queries/${held.id}/transition`, { to: 'answered', comment: 'corrected at the site' });
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json()).toMatchObject({ status: 'answered' });
  });
});
