import { z } from 'zod';
import type { Jobs } from '../core/jobs/boss.js';
import { defineQueue, type QueueDef } from '../core/jobs/queues.js';
import type { Logger } from '../core/logger.js';
import type { HotMemoryService, MemoryReportsService } from './types.js';

/**
 * The background work of project memory (seed 002): a daily distillation of the conversation log into hot memory,
 * a weekly report per project, and pruning when hot memory grows past its cap. The cron jobs only fan out: one job
 * per project, so one project's failure (a model hiccup) is retried alone and never holds up the others.
 */

const projectPayload = z.object({ projectId: z.string().trim().min(1) });
export type ProjectJob = z.infer<typeof projectPayload>;

/** A distillation or a report makes one or a few model calls; 8 weeks of catch-up make up to 8 plus the roll-up. */
export const memoryDistillQueue = defineQueue('memory-distill', projectPayload, { expireInSeconds: 15 * 60 });
export const memoryWeeklyReportsQueue = defineQueue('memory-weekly-reports', projectPayload, { expireInSeconds: 30 * 60 });
export const memoryPruneQueue = defineQueue('memory-prune', projectPayload, { expireInSeconds: 15 * 60 });

/** The cron targets: one schedule per queue in pg-boss 10, and their payload is empty. */
export const memoryDistillAllQueue = defineQueue('memory-distill-all', z.object({}).strict(), { expireInSeconds: 5 * 60 });
export const memoryWeeklyAllQueue = defineQueue('memory-weekly-all', z.object({}).strict(), { expireInSeconds: 5 * 60 });

export interface MemoryWorkerDeps {
  jobs: Jobs;
  hot: HotMemoryService;
  reports: MemoryReportsService;
  logger: Logger;
  /** UTC cron expressions (MEMORY_DISTILL_CRON, MEMORY_WEEKLY_CRON). */
  cron: { distill: string; weekly: string };
}

export async function registerMemoryWorkers(deps: MemoryWorkerDeps): Promise<void> {
  const { jobs, hot, reports, logger } = deps;

  await jobs.work(memoryDistillAllQueue, async () => {
    await fanOut(jobs, memoryDistillQueue, await hot.projectsToDistill());
  });
  await jobs.work(memoryWeeklyAllQueue, async () => {
    await fanOut(jobs, memoryWeeklyReportsQueue, await reports.projectsWithConversations());
  });

  await jobs.work(memoryDistillQueue, async ({ projectId }) => {
    const result = await hot.distill(projectId);
    logger.info({ projectId, ...result }, 'hot memory distilled');
  });
  await jobs.work(memoryWeeklyReportsQueue, async ({ projectId }) => {
    const { generated } = await reports.generateDue(projectId);
    logger.info({ projectId, generated }, 'weekly memory reports generated');
  });
  await jobs.work(memoryPruneQueue, async ({ projectId }) => {
    const result = await hot.prune(projectId);
    logger.info({ projectId, ...result }, 'hot memory pruned');
  });

  await jobs.schedule(memoryDistillAllQueue, deps.cron.distill, {});
  await jobs.schedule(memoryWeeklyAllQueue, deps.cron.weekly, {});
}

/** Prunes a project's hot memory in the background (after a write that left it near or over its cap). */
export async function queueMemoryPrune(jobs: Jobs, projectId: string): Promise<void> {
  // A prune already waiting will read the memory as it is then, so a second one would only repeat it.
  if ((await jobs.isQueued(memoryPruneQueue, 'projectId', [projectId])).size) return;
  await jobs.send(memoryPruneQueue, { projectId });
}

/**
 * One job per project, skipping projects whose job from an earlier tick is still waiting (a slow model, a worker
 * that was down): their job will do the same work.
 */
async function fanOut(jobs: Jobs, queue: QueueDef<ProjectJob>, projectIds: readonly string[]): Promise<void> {
  const waiting = await jobs.isQueued(queue, 'projectId', projectIds);
  await jobs.sendMany(
    queue,
    projectIds.filter((projectId) => !waiting.has(projectId)).map((projectId) => ({ projectId })),
  );
}
