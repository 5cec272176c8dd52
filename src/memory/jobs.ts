import { z } from 'zod';
import type { Jobs } from '../core/jobs/boss.js';
import { defineQueue, type QueueDef } from '../core/jobs/queues.js';
import type { Logger } from '../core/logger.js';
import type { HotMemoryService, MemoryReportsService } from './types.js';

/**
 * The background work of project memory (seed 002): a daily distillation of the conversation log into hot memory
 * and a weekly report per project. The cron jobs only fan out: one job per project, so one project's failure (a
 * model hiccup) is retried alone and never holds up the others. Pruning (seed 002 §5.1, "summarise or notify the
 * admin") has no queue of its own: the distillation, the one writer that adds facts unattended, prunes within its
 * job when its facts would pass the cap; a person's write over the cap is refused, saying what to remove.
 */

const projectPayload = z.object({ projectId: z.string().trim().min(1) });
type ProjectJob = z.infer<typeof projectPayload>;

/** A distillation or a report makes one or a few model calls; 8 weeks of catch-up make up to 8 plus the roll-up. */
const memoryDistillQueue = defineQueue('memory-distill', projectPayload, { expireInSeconds: 15 * 60 });
const memoryWeeklyReportsQueue = defineQueue('memory-weekly-reports', projectPayload, { expireInSeconds: 30 * 60 });

/** The cron targets: one schedule per queue in pg-boss 10, and their payload is empty. */
export const memoryDistillAllQueue = defineQueue('memory-distill-all', z.object({}).strict(), { expireInSeconds: 5 * 60 });
export const memoryWeeklyAllQueue = defineQueue('memory-weekly-all', z.object({}).strict(), { expireInSeconds: 5 * 60 });

interface MemoryWorkerDeps {
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

  await jobs.schedule(memoryDistillAllQueue, deps.cron.distill, {});
  await jobs.schedule(memoryWeeklyAllQueue, deps.cron.weekly, {});
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
