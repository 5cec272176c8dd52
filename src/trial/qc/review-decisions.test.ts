import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hardRuleSkillYaml } from '../../testing/skill-yaml.js';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { createTrialStore } from '../store/trial-store.js';
import { decideReviews } from './review-decisions.js';
import type { TrialRecord } from '../store/types.js';

// Height and weight, each finding decided by a data manager before its query goes to the site.
const SKILL = hardRuleSkillYaml('body-checks', [
  '{ id: height-range, field: height, logic: { and: [{ ">=": [{ var: height }, 120] }, { "<=": [{ var: height }, 220] }] }, message: "Height must be 120-220 cm" }',
  '{ id: weight-range, field: weight, logic: { and: [{ ">=": [{ var: weight }, 30] }, { "<=": [{ var: weight }, 250] }] }, message: "Weight must be 30-250 kg" }',
], true);

const row = (recordId: string, height: number, weight: number): TrialRecord => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, height, weight } });

type Finding = { id: string; field: string; status: string; value: unknown; heldByTaskRunId: string | null };
type Run = { id: string; recordId: string; status: string; currentNode: string; reviewRequest: { dataHash?: string } | null; findings: Finding[] };

/**
 * Issue 32: the review page took 50.8 s for 141 items (one request per item), decided per record only (a height
 * finding could not be approved and the weight finding of the same record rejected), had no bulk decision, and the
 * list stopped at 200 runs without saying so.
 */
describe.each(testEngines())('review decisions per finding, in bulk, paged, on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  let dm: { authorization: string };
  let viewer: { authorization: string };
  const store = () => createTrialStore(ctx.db);

  async function project(id: string, rows: TrialRecord[]): Promise<void> {
    await store().ensureProject({ id, name: id });
    await store().replaceDictionary(id, ['record_id', 'height', 'weight'].map((fieldName) => ({ fieldName, formName: 'f', fieldType: fieldName === 'record_id' ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: true })), 'test');
    await store().replaceEvents(id, [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    await store().importRecords(id, rows, { actor: 'test' });
  }

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'review-decisions', skills: { 'body-checks': SKILL.replace('name:', 'projects: [rd, big]\nname:') }, env: { QC_SWEEP_INTERVAL_MS: '500', QC_STALE_MS: '1000' } });
    ({ ctx, app } = server);
    await project('rd', ['B1', 'B2', 'B3', 'B4', 'B5'].map((id, i) => row(id, 300 + i, 5 + i)));
    await project('big', Array.from({ length: 210 }, (_, i) => row(`P${String(i).padStart(3, '0')}`, 170, 1)));
    const dmUser = await ctx.users.create({ name: 'data-manager', role: 'admin' });
    dm = { authorization: `Bearer ${dmUser.token}` };
    const viewerUser = await ctx.users.create({ name: 'monitor', role: 'viewer' });
    await ctx.users.addMember('rd', viewerUser.user.id);
    viewer = { authorization: `Bearer ${viewerUser.token}` };
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  async function fullQcRun(projectId: string): Promise<void> {
    const started = await app.inject({ method: 'POST', url: `/api/iit/projects/${projectId}/qc-runs`, headers: dm, payload: { skillId: 'body-checks' } });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json().id as string;
    await waitFor(async () => ['waiting_review', 'completed'].includes((await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${id}`, headers: dm })).json().status), `QC run ${id} to finish its checks`, 120_000);
  }

  const queuePage = async (projectId: string, query = '', headers = dm) => {
    const res = await app.inject({ method: 'GET', url: `/api/iit/projects/${projectId}/task-runs?status=SUSPENDED${query}`, headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { taskRuns: Run[]; total: number; page: number; pageSize: number };
  };
  const runOf = async (recordId: string) => (await queuePage('rd')).taskRuns.find((run) => run.recordId === recordId)!;
  const decide = (body: object, headers = dm) => app.inject({ method: 'POST', url: '/api/iit/projects/rd/reviews', headers, payload: body });
  const queries = async (recordId: string) =>
    Object.fromEntries(((await app.inject({ method: 'GET', url: `/api/iit/projects/rd/queries?recordId=${recordId}`, headers: dm })).json().queries as Finding[]).map((q) => [q.field, q.status]));

  it('lists a page of the queue in one request, each run with the findings it holds', async () => {
    await fullQcRun('rd');
    const page = await queuePage('rd');
    expect(page).toMatchObject({ total: 5, page: 1, pageSize: 50 });
    expect(page.taskRuns.map((run) => run.recordId).sort()).toEqual(['B1', 'B2', 'B3', 'B4', 'B5']);
    for (const run of page.taskRuns) {
      expect(run.findings.map((f) => [f.field, f.status, f.heldByTaskRunId])).toEqual([['height', 'held', run.id], ['weight', 'held', run.id]]);
      expect(run.findings[0]).not.toHaveProperty('readFingerprint');
    }
  });

  it('approves the height finding of a record and rejects its weight finding', async () => {
    const run = await runOf('B1');
    const height = run.findings.find((f) => f.field === 'height')!;
    const weight = run.findings.find((f) => f.field === 'weight')!;
    const first = await decide({ decision: 'approve', comment: 'height confirmed on source', items: [{ taskRunId: run.id, dataHash: run.reviewRequest!.dataHash, queryIds: [height.id] }] });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json(), first.body).toMatchObject({ decided: 1, results: [{ taskRunId: run.id, status: 'partly_decided', settled: 1 }] });
    expect(await queries('B1')).toEqual({ height: 'open', weight: 'held' });
    // Still in the queue, showing what it holds now, with the dataHash of that.
    const waiting = await runOf('B1');
    expect(waiting.findings.map((f) => [f.field, f.status])).toEqual([['height', 'open'], ['weight', 'held']]);
    expect(waiting.reviewRequest!.dataHash).toBe(first.json().results[0].dataHash);

    const second = await decide({ decision: 'reject', comment: 'weight in pounds, fine', items: [{ taskRunId: run.id, dataHash: waiting.reviewRequest!.dataHash, queryIds: [weight.id] }] });
    // The last finding rejected, but the height went to the site: the answer says the run ends approved.
    expect(second.json()).toMatchObject({ decided: 1, results: [{ taskRunId: run.id, status: 'decided', decision: 'approve' }] });
    expect(await queries('B1')).toEqual({ height: 'open', weight: 'cancelled' });
    await waitFor(async () => (await app.inject({ method: 'GET', url: `/api/iit/task-runs/${run.id}`, headers: dm })).json().status === 'COMPLETED', 'the run of B1 to end');
    // One of its findings went to the site: the run ends as approved.
    expect((await app.inject({ method: 'GET', url: `/api/iit/task-runs/${run.id}`, headers: dm })).json().currentNode).toBe('end_confirmed');
    const trail = (await app.inject({ method: 'GET', url: `/api/iit/projects/rd/audit?entityType=query&entityId=${weight.id}`, headers: dm })).json();
    expect(JSON.stringify(trail)).toContain('weight in pounds, fine');
  });

  it('rejects a selection of records with one comment in one request, and says which it could not decide', async () => {
    const [b2, b3, b4] = await Promise.all(['B2', 'B3', 'B4'].map(runOf));
    // B4 changes after the page was loaded: its decision is refused, saying the data changed, not that someone decided first.
    await store().importRecords('rd', [row('B4', 305, 9)], { actor: 'site' });
    const res = await decide({ decision: 'reject', comment: 'transcription checked, no action', items: [b2, b3, b4].map((run) => ({ taskRunId: run!.id, dataHash: run!.reviewRequest!.dataHash })) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.decided).toBe(2);
    expect(body.results.slice(0, 2)).toMatchObject([{ taskRunId: b2!.id, status: 'decided', decision: 'reject' }, { taskRunId: b3!.id, status: 'decided', decision: 'reject' }]);
    expect(body.results[2]).toMatchObject({ taskRunId: b4!.id, status: 'refused', code: 'CONFLICT_STATE', reason: 'review_data_changed' });
    expect(body.results[2].message).toMatch(/record B4 changed after the review was shown/);
    await waitFor(async () => (await queries('B3')).height === 'cancelled', 'the rejected queries to be withdrawn');
    expect(await queries('B2')).toEqual({ height: 'cancelled', weight: 'cancelled' });
  });

  it('refuses every decision to a viewer', async () => {
    const run = await runOf('B5');
    expect((await queuePage('rd', '', viewer)).total).toBeGreaterThan(0);
    const res = await decide({ decision: 'approve', items: [{ taskRunId: run.id }] }, viewer);
    expect(res.statusCode).toBe(403);
    expect(await queries('B5')).toEqual({ height: 'held', weight: 'held' });
  });

  it('refuses an empty selection of findings instead of ending the review as decided', async () => {
    const run = await runOf('B5');
    const answer = await decideReviews({ db: ctx.db, jobs: ctx.jobs! }, { projectId: 'rd', actor: 'data-manager', decision: 'reject', comment: '', items: [{ taskRunId: run.id, queryIds: [] }] });
    expect(answer).toMatchObject({ decided: 0, results: [{ taskRunId: run.id, status: 'refused', code: 'VALIDATION_FAILED', message: expect.stringContaining('leave queryIds out to decide the whole run') }] });
    expect((await runOf('B5')).status).toBe('SUSPENDED');
    expect(await queries('B5')).toEqual({ height: 'held', weight: 'held' });
  });

  it('tells a reviewer deciding on a page loaded before another decided some findings of the run that it was someone else', async () => {
    const loaded = await runOf('B5');
    const [height, weight] = ['height', 'weight'].map((field) => loaded.findings.find((f) => f.field === field)!);
    const first = await decide({ decision: 'approve', comment: 'height fine', items: [{ taskRunId: loaded.id, dataHash: loaded.reviewRequest!.dataHash, queryIds: [height!.id] }] });
    expect(first.json()).toMatchObject({ results: [{ status: 'partly_decided' }] });
    const late = await decide({ decision: 'reject', comment: 'weight fine', items: [{ taskRunId: loaded.id, dataHash: loaded.reviewRequest!.dataHash, queryIds: [weight!.id] }] });
    expect(late.json()).toMatchObject({ decided: 0, results: [{ status: 'refused', code: 'CONFLICT_STATE', reason: 'review_data_changed', message: expect.stringContaining('someone else decided some of its findings') }] });
    expect(await queries('B5')).toEqual({ height: 'open', weight: 'held' });
  });

  it('pages a queue of 210 records: every run on exactly one page, the total said, never cut at 200', async () => {
    await fullQcRun('big');
    const all = await queuePage('big', '&pageSize=500');
    expect(all.total).toBe(210);
    expect(all.taskRuns).toHaveLength(210);
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await queuePage('big', `&page=${page}&pageSize=100`);
      expect(res).toMatchObject({ total: 210, page, pageSize: 100 });
      seen.push(...res.taskRuns.map((run) => run.recordId));
    }
    expect(new Set(seen).size).toBe(210);
    const tooBig = await app.inject({ method: 'GET', url: '/api/iit/projects/big/task-runs?pageSize=501', headers: dm });
    expect(tooBig.statusCode).toBe(400);
  });
});
