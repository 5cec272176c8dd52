import { z } from 'zod';
import { defineQueue } from '../../core/jobs/queues.js';

/**
 * One job advances one task run. Runs are created with their batch, so the same job serves a first start, a
 * resume after review and a recovery after a crash: advancing is idempotent under the run's lease.
 */
export const advanceTaskRunQueue = defineQueue('qc-advance-task-run', z.object({ taskRunId: z.string().uuid() }), {
  retryLimit: 5,
  // Longer than the slowest soft-rule step; a job of a dead worker is retried after this.
  expireInSeconds: 15 * 60,
});

/** Scheduled QC: one queue per skill, because a pg-boss 10 schedule is keyed by queue name. */
export const cronQueueName = (skillId: string): string => `qc-cron-${skillId}`;
export const cronPayload = z.object({ skillId: z.string().min(1) });
export const cronQueue = (skillId: string) => defineQueue(cronQueueName(skillId), cronPayload);
