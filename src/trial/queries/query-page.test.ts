import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns, type QueryStatus } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { listQueries, type DataQuery } from '../queries.js';
import { pageQueries, type QueryPageRequest, type QuerySortColumn } from './query-page.js';

/**
 * A trial past the old 500-row cap: 640 queries whose creation times tie in groups of seven, and six queries of
 * one record created at the same instant, so ties on every sort key but the id are present.
 */
const PROJECT = 'paging';
const SITES = ['SITE-01', 'SITE-02', 'SITE-03'];
const SEVERITIES = ['error', 'warning', 'info'] as const;
const statusOf = (i: number): QueryStatus => (i % 10 === 0 ? 'closed' : i % 10 === 1 ? 'answered' : i % 25 === 2 ? 'cancelled' : 'open');
/** Stored open but still kept from the site by their run: they read `held`. */
const isHeld = (i: number): boolean => i % 25 === 3;

describe('paging and sorting queries', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let all: DataQuery[];

  const walk = async (request: Omit<QueryPageRequest, 'projectId' | 'page'>) => {
    const seen: DataQuery[] = [];
    for (let page = 1; ; page += 1) {
      const result = await pageQueries(ctx.db, { projectId: PROJECT, ...request, page });
      seen.push(...result.queries);
      if (result.queries.length < result.pageSize) return { seen, last: result };
    }
  };

  beforeAll(async () => {
    ctx = await buildTestContext();
    await ctx.users.createProject({ id: PROJECT, name: 'Paging' });
    await ctx.users.createProject({ id: 'elsewhere', name: 'Elsewhere' });
    const [run] = await ctx.db.insert(taskRuns).values({ projectId: PROJECT, skillId: 'test', recordId: 'R0000', status: 'COMPLETED', currentNode: 'end' }).returning();
    const base = Date.parse('2026-01-01T00:00:00Z');
    const row = (i: number, overrides: Partial<typeof pendingActions.$inferInsert> = {}) => ({
      projectId: PROJECT,
      taskRunId: run!.id,
      recordId: `R${String(i).padStart(4, '0')}`,
      eventName: 'v1',
      site: SITES[i % 3]!,
      nodeId: 'checks',
      ruleId: `rule-${i % 4}`,
      field: `f${i % 5}`,
      message: `query ${i}`,
      severity: SEVERITIES[i % 3]!,
      status: statusOf(i),
      heldByTaskRunId: isHeld(i) ? run!.id : null,
      createdAt: new Date(base + Math.floor(i / 7) * 1000),
      ...overrides,
    });
    await ctx.db.insert(pendingActions).values(Array.from({ length: 640 }, (_, i) => row(i)));
    const tie = new Date(base - 60_000);
    await ctx.db.insert(pendingActions).values(Array.from({ length: 6 }, (_, i) => row(9000, { ruleId: `tie-${i}`, createdAt: tie, status: 'open' })));
    // Another project's query never shows up in this one's pages or counts.
    const [other] = await ctx.db.insert(taskRuns).values({ projectId: 'elsewhere', skillId: 'test', recordId: 'X', status: 'COMPLETED', currentNode: 'end' }).returning();
    await ctx.db.insert(pendingActions).values({ ...row(1), projectId: 'elsewhere', taskRunId: other!.id });
    all = (await walk({ pageSize: 500 })).seen;
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('reaches every query of a trial larger than 500, each exactly once, the last one included', async () => {
    expect(all).toHaveLength(646);
    expect(new Set(all.map((q) => q.id)).size).toBe(646);
    const { seen, last } = await walk({});
    expect(seen.map((q) => q.id)).toEqual(all.map((q) => q.id));
    expect(last).toMatchObject({ page: 13, pageSize: 50, total: 646 });
    expect(last.queries).toHaveLength(46);
    // Newest first by default; the oldest (the tied group created a minute before the rest) come last.
    expect(seen.at(-1)!.recordId).toBe('R9000');
    const beyond = await pageQueries(ctx.db, { projectId: PROJECT, page: 14 });
    expect(beyond).toMatchObject({ queries: [], total: 646, page: 14 });
    // A held query waits for its review: nobody may move it; every other status has somewhere to go.
    expect(seen.filter((q) => q.status === 'held')).toHaveLength(26);
    expect(seen.every((q) => (q.status === 'held' ? q.allowedTransitions.length === 0 : q.allowedTransitions.length > 0))).toBe(true);
    // The unpaged list (a record's or a run's queries) has no cap either.
    expect(await listQueries(ctx.db, { projectId: PROJECT })).toHaveLength(646);
  });

  it.each<[QuerySortColumn, (q: DataQuery) => string | number]>([
    ['site', (q) => q.site],
    ['createdAt', (q) => q.createdAt.getTime()],
    ['severity', (q) => ({ info: 0, warning: 1, error: 2 })[q.severity]],
    ['status', (q) => ({ held: 0, open: 1, reopened: 2, answered: 3, closed: 4, cancelled: 5 })[q.status]],
    ['ruleId', (q) => q.ruleId],
  ])('sorts by %s both ways, ties broken by record then id, one order across pages', async (sort, key) => {
    for (const order of ['asc', 'desc'] as const) {
      const { seen } = await walk({ sort, order, pageSize: 70 });
      expect(seen).toHaveLength(646);
      expect(new Set(seen.map((q) => q.id)).size).toBe(646);
      for (let i = 1; i < seen.length; i += 1) {
        const [before, after] = [seen[i - 1]!, seen[i]!];
        const [a, b] = [key(before), key(after)];
        if (a !== b) {
          expect(order === 'asc' ? a < b : a > b, `${sort} ${order} at ${i}`).toBe(true);
        } else if (before.recordId !== after.recordId) {
          expect(before.recordId < after.recordId, `${sort} ${order} record tie at ${i}`).toBe(true);
        } else {
          expect(order === 'asc' ? before.id < after.id : before.id > after.id, `${sort} ${order} id tie at ${i}`).toBe(true);
        }
      }
    }
  });

  it('sorts ties on both the column and the record by id, in the order asked', async () => {
    const tied = (order: 'asc' | 'desc') => pageQueries(ctx.db, { projectId: PROJECT, recordId: 'R9000', sort: 'createdAt', order });
    const up = (await tied('asc')).queries.map((q) => q.id);
    const down = (await tied('desc')).queries.map((q) => q.id);
    expect(up).toHaveLength(6);
    expect(up).toEqual([...up].sort());
    expect(down).toEqual([...up].reverse());
  });

  it('counts every status for the same filters but the status, and totals the status asked for', async () => {
    const site = 'SITE-02';
    const expected = { held: 0, open: 0, answered: 0, closed: 0, reopened: 0, cancelled: 0 };
    for (const q of all.filter((q) => q.site === site)) expected[q.status] += 1;
    const unfiltered = await pageQueries(ctx.db, { projectId: PROJECT, site, pageSize: 5 });
    expect(unfiltered.counts).toEqual(expected);
    expect(unfiltered.total).toBe(Object.values(expected).reduce((a, b) => a + b, 0));
    const closed = await pageQueries(ctx.db, { projectId: PROJECT, site, status: 'closed', pageSize: 500 });
    expect(closed.counts).toEqual(expected);
    expect(closed.total).toBe(expected.closed);
    expect(closed.queries).toHaveLength(expected.closed);
    expect(closed.queries.every((q) => q.status === 'closed' && q.site === site)).toBe(true);
  });

  it('filters held and open apart: a query still held by its run is not counted as sent to the site', async () => {
    const held = await pageQueries(ctx.db, { projectId: PROJECT, status: 'held', pageSize: 500 });
    const open = await pageQueries(ctx.db, { projectId: PROJECT, status: 'open', pageSize: 500 });
    expect(held.total).toBe(26);
    expect(held.queries.map((q) => q.recordId)).toEqual(expect.arrayContaining(['R0003', 'R0028', 'R0628']));
    expect(held.queries.every((q) => q.status === 'held' && q.heldByTaskRunId !== null)).toBe(true);
    expect(open.queries.every((q) => q.status === 'open' && q.heldByTaskRunId === null)).toBe(true);
    expect(open.total).toBe(all.filter((q) => q.status === 'open').length);
    expect(held.counts.held + held.counts.open).toBe(all.filter((q) => q.status === 'held' || q.status === 'open').length);
  });

  it('matches nothing for a malformed run id, and refuses a page size or page out of range', async () => {
    expect(await pageQueries(ctx.db, { projectId: PROJECT, taskRunId: 'not-a-uuid' })).toEqual({
      queries: [],
      total: 0,
      page: 1,
      pageSize: 50,
      counts: { held: 0, open: 0, answered: 0, closed: 0, reopened: 0, cancelled: 0 },
    });
    await expect(pageQueries(ctx.db, { projectId: PROJECT, pageSize: 501 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'pageSize' } });
    await expect(pageQueries(ctx.db, { projectId: PROJECT, page: 0 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'page' } });
    await expect(pageQueries(ctx.db, { projectId: PROJECT, sort: 'message' as QuerySortColumn })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'sort' } });
  });
});
