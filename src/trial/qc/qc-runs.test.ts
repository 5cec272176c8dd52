import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { pageTaskRuns } from './qc-runs.js';

/**
 * Issue 32 (low): record ids sorted as text (10, 108, 115, ..., 16). The review queue lists the runs of one QC
 * batch, which share their timestamp, by record: in the order a site numbers its subjects.
 */
describe.each(testEngines())('a page of the review queue on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    await ctx.users.createProject({ id: 'order', name: 'Record order' });
    const at = new Date('2026-11-01T00:00:00Z');
    await ctx.db.insert(taskRuns).values(['108', '16', '2', '10', 'S9', 'S10'].map((recordId) => ({ projectId: 'order', skillId: 'checks', recordId, status: 'SUSPENDED' as const, currentNode: 'review', updatedAt: at })));
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('lists the runs of one batch by record id in natural order, across pages', async () => {
    const first = await pageTaskRuns(ctx.db, { projectId: 'order', statuses: ['SUSPENDED'], pageSize: 4 });
    const second = await pageTaskRuns(ctx.db, { projectId: 'order', statuses: ['SUSPENDED'], page: 2, pageSize: 4 });
    expect([...first.taskRuns, ...second.taskRuns].map((run) => run.recordId)).toEqual(['2', '10', '16', '108', 'S9', 'S10']);
    expect(first.total).toBe(6);
  });

  it('refuses a page before the first one, saying pages start at 1, and a page size past the limit', async () => {
    await expect(pageTaskRuns(ctx.db, { projectId: 'order', page: 0 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: 'page must be a whole number of 1 or more (the first page is 1); got 0.', details: { field: 'page' } });
    await expect(pageTaskRuns(ctx.db, { projectId: 'order', pageSize: 501 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: 'pageSize must be a whole number from 1 to 500; got 501.', details: { field: 'pageSize' } });
  });
});
