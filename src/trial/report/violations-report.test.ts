import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildViolationsReport } from './violations-report.js';

/** Issue 32 (low): record ids sorted as text (10, 108, 16, 2); the report lists them as a site numbers its subjects. */
describe.each(testEngines())('the violations report on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    await ctx.users.createProject({ id: 'report-order', name: 'Report order' });
    for (const recordId of ['108', '16', '2', '10']) {
      const [run] = await ctx.db.insert(taskRuns).values({ projectId: 'report-order', skillId: 'checks', recordId, status: 'COMPLETED', currentNode: 'end' }).returning();
      await ctx.db.insert(pendingActions).values({ projectId: 'report-order', taskRunId: run!.id, recordId, nodeId: 'rules', ruleId: 'age', field: 'age', message: 'check age', severity: 'error', value: 1 });
    }
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('lists its rows by record id in natural order', async () => {
    const report = await buildViolationsReport(ctx.db, 'report-order');
    expect(report.rows.map((row) => row.recordId)).toEqual(['2', '10', '16', '108']);
  });
});
