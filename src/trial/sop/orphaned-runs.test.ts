import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskRuns } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { advanceTaskRunQueue } from '../qc/queues.js';
import { createTrialStore } from '../store/trial-store.js';
import { createTaskRuns, findOrphanedRuns } from './task-runs.js';

describe.each(testEngines())('finding runs nobody advances on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    // Jobs are started but no worker is registered: queued jobs stay queued.
    ctx = await buildTestContext({ engine, startJobs: true });
    await createTrialStore(ctx.db).ensureProject({ id: 'p', name: 'p' });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('re-enqueues lost and abandoned runs, but not runs whose job is only waiting in the queue', async () => {
    const [queued, lost, abandoned, live] = await createTaskRuns(ctx.db, { projectId: 'p', skillId: 'demo-core-checks', startNode: 'core_checks', recordIds: ['A', 'B', 'C', 'D'], actor: 't' });
    await ctx.jobs!.send(advanceTaskRunQueue, { taskRunId: queued!.id });
    const old = new Date(Date.now() - 120_000);
    await ctx.db.update(taskRuns).set({ updatedAt: old }).where(eq(taskRuns.projectId, 'p'));
    await ctx.db.update(taskRuns).set({ status: 'RUNNING', leaseOwner: 'dead', leaseUntil: new Date(Date.now() - 1000), updatedAt: old }).where(eq(taskRuns.id, abandoned!.id));
    await ctx.db.update(taskRuns).set({ status: 'RUNNING', leaseOwner: 'alive', leaseUntil: new Date(Date.now() + 60_000), updatedAt: old }).where(eq(taskRuns.id, live!.id));

    const orphans = await findOrphanedRuns(ctx.db, { staleMs: 60_000, jobs: ctx.jobs!, queue: advanceTaskRunQueue });
    expect(orphans.map((o) => o.id).sort()).toEqual([lost!.id, abandoned!.id].sort());
  });
});
