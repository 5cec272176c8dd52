import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BulkCloseQueriesResponse, DataQueryPage, ViolationsReport } from '../../contract/index.js';
import { pendingActions, taskRuns, type QueryStatus } from '../../core/db/schema/trial.js';
import { buildServer } from '../../http/server.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';

/**
 * Issue 32, what a data manager met on the query list over a day, through the HTTP API as the console calls it:
 * record ids sorted as text (10, 108, 115, ..., 16), no way to list one rule's queries, bulk-close refusals naming
 * query ids (uuids nobody can find) instead of records, and a report counting "(no site)" in English for every
 * language.
 */
const PROJECT = 'query-list';
const RECORDS = ['10', '108', '115', '16', '2', 'S017', 'S18', 'S9'];

describe.each(testEngines())('the query list a data manager works with on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let headers: { authorization: string };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    const admin = await ctx.users.create({ name: 'ql-admin', role: 'admin' });
    headers = { authorization: `Bearer ${admin.token}` };
    await ctx.users.createProject({ id: PROJECT, name: 'Query list' });
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'checks', recordId: 'R', status: 'COMPLETED', currentNode: 'end' }).returning();
    const createdAt = new Date('2026-03-01T08:00:00Z');
    for (const [i, recordId] of RECORDS.entries()) {
      // Every record has a weight query; record 16 also a closed height query, record 108 a query still held for review.
      const rows: Array<{ ruleId: string; field: string; status: QueryStatus; held?: boolean }> = [{ ruleId: 'weight-max', field: 'weight_kg', status: 'open' }];
      if (recordId === '16') rows.push({ ruleId: 'height-range', field: 'height_cm', status: 'closed' });
      if (recordId === '108') rows.push({ ruleId: 'height-range', field: 'height_cm', status: 'open', held: true });
      for (const row of rows) {
        const [inserted] = await ctx.db
          .insert(pendingActions)
          .values({ projectId: PROJECT, taskRunId: run!.id, recordId, eventName: 'v1_arm_1', site: i % 2 ? 'SITE-01' : '', nodeId: 'checks', ruleId: row.ruleId, field: row.field, message: `${row.field} check`, severity: 'error', status: row.status, heldByTaskRunId: row.held ? run!.id : null, createdAt })
          .returning();
        ids[`${recordId}:${row.ruleId}`] = inserted!.id;
      }
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const list = async (query: string) => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/queries?${query}`, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DataQueryPage>();
  };

  it('sorts records as numbers where they are numbers: 2, 10, 16, 108, 115, then S9, S017, S18', async () => {
    const natural = ['2', '10', '16', '108', '115', 'S9', 'S017', 'S18'];
    expect((await list('ruleId=weight-max&sort=recordId&order=asc')).queries.map((q) => q.recordId)).toEqual(natural);
    expect((await list('ruleId=weight-max&sort=recordId&order=desc')).queries.map((q) => q.recordId)).toEqual([...natural].reverse());
    // Ties on the sorted column (one creation time for the whole run) go by record in the same order.
    expect((await list('ruleId=weight-max&sort=createdAt&order=desc')).queries.map((q) => q.recordId)).toEqual(natural);
  });

  it('lists one rule\'s queries, with counts per status for that rule', async () => {
    const page = await list('ruleId=height-range&sort=recordId&order=asc');
    expect(page.queries.map((q) => [q.recordId, q.ruleId, q.status])).toEqual([['16', 'height-range', 'closed'], ['108', 'height-range', 'held']]);
    expect(page.total).toBe(2);
    expect(page.counts).toMatchObject({ closed: 1, held: 1, open: 0 });
    expect((await list('ruleId=no-such-rule')).total).toBe(0);
  });

  it('names the record and field of each query bulk close refused, never only its id', async () => {
    const closed = ids['16:height-range']!;
    const held = ids['108:height-range']!;
    const response = await app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/bulk-close`, headers, payload: { queryIds: [closed, held, ids['2:weight-max']], reason: 'Verified against source' } });
    expect(response.statusCode, response.body).toBe(200);
    const result = response.json<BulkCloseQueriesResponse>();
    expect(result.closed).toBe(1);
    const skipped = Object.fromEntries(result.skipped.map((skip) => [skip.id, skip]));
    expect(skipped[closed]).toMatchObject({ recordId: '16', eventName: 'v1_arm_1', field: 'height_cm', status: 'closed' });
    expect(skipped[closed]!.why).toContain('record 16, v1_arm_1.height_cm');
    expect(skipped[held]).toMatchObject({ recordId: '108', field: 'height_cm', status: 'held' });
    expect(skipped[held]!.why).toContain('record 108, v1_arm_1.height_cm');
    for (const skip of result.skipped) expect(skip.why).not.toContain(skip.id);
  });

  it('counts queries of records without a site under "", for the console to name in its language', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/report`, headers });
    expect(response.statusCode, response.body).toBe(200);
    const bySite = response.json<ViolationsReport>().bySite.map((row) => row.key).sort();
    expect(bySite).toEqual(['', 'SITE-01']);
  });
});
