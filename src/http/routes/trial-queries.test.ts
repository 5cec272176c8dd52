import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as contract from '../../contract/index.js';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { MAX_BULK_CLOSE_IDS, MAX_CLOSE_REASON } from '../../trial/queries/bulk-close.js';
import { MAX_PAGE_SIZE, QUERY_SORT_COLUMNS } from '../../trial/queries/query-page.js';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';

/** The query list and bulk close over HTTP: paging past 500, the page's shape, and who may close. */
const PROJECT = 'http-queries';
const COUNT = 520;

describe('GET /queries pages and POST /queries/bulk-close', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  const headers: Record<'data_manager' | 'coordinator' | 'viewer', { authorization: string }> = {} as never;
  let ids: string[];

  beforeAll(async () => {
    ctx = await buildTestContext();
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: 'HTTP queries' });
    for (const role of ['data_manager', 'coordinator', 'viewer'] as const) {
      const made = await ctx.users.create({ name: `hq-${role}`, role });
      await ctx.users.addMember(PROJECT, made.user.id);
      headers[role] = { authorization: `Bearer ${made.token}` };
    }
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'test', recordId: 'R', status: 'COMPLETED', currentNode: 'end' }).returning();
    const rows = await ctx.db
      .insert(pendingActions)
      .values(Array.from({ length: COUNT }, (_, i) => ({ projectId: PROJECT, taskRunId: run!.id, recordId: `R${String(i).padStart(4, '0')}`, nodeId: 'checks', ruleId: 'r1', field: 'age', message: 'age out of range', severity: 'error' as const })))
      .returning({ id: pendingActions.id });
    ids = rows.map((row) => row.id);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  const get = (query: string, who: 'coordinator' | 'viewer' = 'viewer') => app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/queries${query}`, headers: headers[who] });
  const bulkClose = (payload: unknown, who: keyof typeof headers = 'data_manager') => app.inject({ method: 'POST', url: `/api/iit/projects/${PROJECT}/queries/bulk-close`, headers: headers[who], payload: payload as object });

  it('keeps the contract and the library to the same columns and limits', () => {
    expect(contract.QuerySortColumn.options).toEqual([...QUERY_SORT_COLUMNS]);
    expect(contract.QUERY_PAGE_SIZE_MAX).toBe(MAX_PAGE_SIZE);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `id-${i}`);
    expect(contract.BulkCloseQueriesRequest.safeParse({ queryIds: ids(MAX_BULK_CLOSE_IDS), reason: 'x'.repeat(MAX_CLOSE_REASON) }).success).toBe(true);
    expect(contract.BulkCloseQueriesRequest.safeParse({ queryIds: ids(MAX_BULK_CLOSE_IDS + 1), reason: 'x' }).success).toBe(false);
    expect(contract.BulkCloseQueriesRequest.safeParse({ queryIds: ids(1), reason: 'x'.repeat(MAX_CLOSE_REASON + 1) }).success).toBe(false);
  });

  it('serves any page of a list longer than 500, sorted as asked, with the total and the counts', async () => {
    const first = await get('?pageSize=500&sort=recordId&order=asc');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ total: COUNT, page: 1, pageSize: 500, counts: { open: COUNT, answered: 0, closed: 0, reopened: 0, cancelled: 0 } });
    const last = (await get('?page=2&pageSize=500&sort=recordId&order=asc')).json() as contract.DataQueryPage;
    expect(last.queries.map((q) => q.recordId)).toEqual(Array.from({ length: 20 }, (_, i) => `R0${500 + i}`));
    const byDefault = (await get('')).json() as contract.DataQueryPage;
    expect(byDefault).toMatchObject({ page: 1, pageSize: 50, total: COUNT });
    expect(byDefault.queries).toHaveLength(50);
  });

  it('refuses a page size over 500, an unknown sort column and the old limit parameter with what to send', async () => {
    for (const [query, named] of [['?pageSize=501', 'querystring.pageSize'], ['?sort=message', 'querystring.sort'], ['?page=0', 'querystring.page'], ['?limit=10', 'limit']]) {
      const response = await get(query!);
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(named!) });
    }
  });

  it('lets a data manager close a selection with one reason, and refuses a viewer, the site or a request without a reason', async () => {
    expect((await bulkClose({ queryIds: [ids[0]], reason: 'not needed' }, 'viewer')).statusCode).toBe(403);
    expect((await bulkClose({ queryIds: [ids[0]], reason: 'not needed' }, 'coordinator')).statusCode).toBe(403);
    expect((await bulkClose({ queryIds: [ids[0]] })).statusCode).toBe(400);
    expect((await bulkClose({ queryIds: [ids[0]], reason: '' })).statusCode).toBe(400);
    const missing = '00000000-0000-4000-8000-000000000000';
    const response = await bulkClose({ queryIds: [ids[0], ids[1], missing], reason: 'duplicates' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ closed: 2, skipped: [{ id: missing, status: null, recordId: null, eventName: null, field: null, why: `No query "${missing}" exists in project "${PROJECT}"; reload the list and select again.` }] });
    const page = (await get('?status=closed&sort=recordId&order=asc')).json() as contract.DataQueryPage;
    expect(page.queries.map((q) => q.id)).toEqual([ids[0], ids[1]]);
    expect(page).toMatchObject({ total: 2, counts: { open: COUNT - 2, closed: 2 } });
  });
});
