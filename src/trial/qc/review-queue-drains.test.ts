import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hardRuleSkillYaml } from '../../testing/skill-yaml.js';
import { startQcServer, type QcServer } from '../../testing/qc-server.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { createTrialStore } from '../store/trial-store.js';
import type { TrialRecord } from '../store/types.js';

// Height and weight, each finding decided by a data manager before its query goes to the site.
const SKILL = hardRuleSkillYaml('body-checks', [
  '{ id: height-range, field: height, logic: { and: [{ ">=": [{ var: height }, 120] }, { "<=": [{ var: height }, 220] }] }, message: "Height must be 120-220 cm" }',
  '{ id: weight-range, field: weight, logic: { and: [{ ">=": [{ var: weight }, 30] }, { "<=": [{ var: weight }, 250] }] }, message: "Weight must be 30-250 kg" }',
], true);

const row = (recordId: string, height: number, weight: number): TrialRecord => ({ recordId, eventName: 'baseline', site: 'SITE-01', data: { record_id: recordId, height, weight } });

/**
 * Issue 32: each full QC run sent every record whose rule still fired back to review (43, then 73, then 141 items
 * for about 35 records), decided ones included, and reopened a query closed as verified on unchanged data. Done
 * as REDCap Data Quality (exclude a result) and an EDC discrepancy workflow: a decided finding stays decided while
 * the values its rule read are unchanged, a changed value raises it again, one open review item per record and skill.
 */
describe.each(testEngines())('the review queue drains on %s', (engine) => {
  let server: QcServer | undefined;
  let ctx: QcServer['ctx'];
  let app: QcServer['app'];
  let auth: { authorization: string };
  const store = () => createTrialStore(ctx.db);

  beforeAll(async () => {
    server = await startQcServer({ engine, name: 'review-drains', skills: { 'body-checks': SKILL }, env: { QC_SWEEP_INTERVAL_MS: '500', QC_STALE_MS: '1000' } });
    ({ ctx, app } = server);
    await store().ensureProject({ id: 'rq', name: 'Review queue' });
    await store().replaceDictionary('rq', ['record_id', 'height', 'weight'].map((fieldName) => ({ fieldName, formName: 'f', fieldType: fieldName === 'record_id' ? 'text' : 'integer', label: fieldName, choices: [], validationMin: null, validationMax: null, required: true })), 'test');
    await store().replaceEvents('rq', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    // R1-R4 each break both rules; R5 breaks one; R6 is clean.
    await store().importRecords('rq', [row('R1', 300, 5), row('R2', 310, 6), row('R3', 320, 7), row('R4', 330, 8), row('R5', 170, 400), row('R6', 170, 70)], { actor: 'test' });
    const admin = await ctx.users.create({ name: 'dm-admin', role: 'admin' });
    auth = { authorization: `Bearer ${admin.token}` };
  });

  afterAll(async () => {
    await server?.close();
  });

  async function fullQcRun(): Promise<void> {
    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/rq/qc-runs', headers: auth, payload: { skillId: 'body-checks' } });
    expect(started.statusCode).toBe(202);
    const id = started.json().id as string;
    await waitFor(async () => ['waiting_review', 'completed'].includes((await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${id}`, headers: auth })).json().status), `QC run ${id} to finish its checks`);
  }

  type Run = { id: string; recordId: string; reviewRequest: { dataHash?: string } | null };
  async function queue(): Promise<Run[]> {
    const res = await app.inject({ method: 'GET', url: '/api/iit/projects/rq/task-runs?status=SUSPENDED', headers: auth });
    expect(res.statusCode).toBe(200);
    return res.json().taskRuns as Run[];
  }
  const queueRecords = async () => (await queue()).map((run) => run.recordId).sort();

  type Query = { id: string; recordId: string; field: string; status: string; value: unknown };
  async function queries(recordId: string): Promise<Query[]> {
    const res = await app.inject({ method: 'GET', url: `/api/iit/projects/rq/queries?recordId=${recordId}&pageSize=500`, headers: auth });
    return res.json().queries as Query[];
  }

  const review = async (recordId: string, decision: 'approve' | 'reject') => {
    const run = (await queue()).find((r) => r.recordId === recordId)!;
    const res = await app.inject({ method: 'POST', url: `/api/iit/task-runs/${run.id}/review`, headers: auth, payload: { decision, comment: 'checked against source', dataHash: run.reviewRequest?.dataHash } });
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => !(await queue()).some((r) => r.id === run.id), `the review of ${recordId} to leave the queue`);
  };

  it('keeps one item per record over three runs on unchanged data, never raises a decided finding again, and raises it again when a value it read changes', async () => {
    await fullQcRun();
    expect(await queueRecords()).toEqual(['R1', 'R2', 'R3', 'R4', 'R5']);
    await fullQcRun();
    await fullQcRun();
    // Three full runs on unchanged data: still one item per record, the newest run's.
    expect(await queueRecords()).toEqual(['R1', 'R2', 'R3', 'R4', 'R5']);
    expect((await queries('R1')).map((q) => q.status)).toEqual(['held', 'held']);

    // R1 approved (sent to the site), R2 rejected (withdrawn), R3 approved and then its queries closed as verified against source.
    await review('R1', 'approve');
    await review('R2', 'reject');
    await review('R3', 'approve');
    for (const query of await queries('R3')) {
      const closed = await app.inject({ method: 'POST', url: `/api/iit/projects/rq/queries/${query.id}/transition`, headers: auth, payload: { to: 'closed', comment: 'verified against source' } });
      expect(closed.statusCode, closed.body).toBe(200);
    }
    expect(await queueRecords()).toEqual(['R4', 'R5']);

    await fullQcRun();
    await fullQcRun();
    // Decided findings stay decided on unchanged data: not back in review, the site's queries stay open, nothing reopened.
    expect(await queueRecords()).toEqual(['R4', 'R5']);
    expect((await queries('R1')).map((q) => q.status)).toEqual(['open', 'open']);
    expect((await queries('R2')).map((q) => q.status)).toEqual(['cancelled', 'cancelled']);
    expect((await queries('R3')).map((q) => q.status)).toEqual(['closed', 'closed']);

    // The site changes R2's height (still out of range) and R3's weight: those findings are about new values now.
    await store().importRecords('rq', [row('R2', 315, 6), row('R3', 320, 9)], { actor: 'site' });
    await fullQcRun();
    expect(await queueRecords()).toEqual(['R2', 'R3', 'R4', 'R5']);
    const r2 = Object.fromEntries((await queries('R2')).map((q) => [q.field, q.status]));
    expect(r2).toEqual({ height: 'held', weight: 'cancelled' });
    const r3 = Object.fromEntries((await queries('R3')).map((q) => [q.field, q.status]));
    expect(r3).toEqual({ height: 'closed', weight: 'held' });
  });
});
