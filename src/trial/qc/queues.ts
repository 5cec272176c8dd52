import { z } from 'zod';
import { defineQueue } from '../../core/jobs/queues.js';

/** The most task runs one batch job carries: a batch commits in one transaction per node, so it stays short. */
const MAX_TASK_RUNS_PER_JOB = 1000;

/**
 * One job advances one task run. Runs are created with their batch, so the same job serves a first start, a
 * resume after review and a recovery after a crash: advancing is idempotent under the run's lease.
 */
export const advanceTaskRunQueue = defineQueue('qc-advance-task-run', z.object({ taskRunId: z.string().uuid() }), {
  retryLimit: 5,
  // Longer than the slowest soft-rule step; a job of a dead worker is retried after this.
  expireInSeconds: 15 * 60,
});

/**
 * One job advances a batch of task runs of one QC run together (the engine's advanceTaskRuns): a fixed number of
 * statements per node for the whole batch, which is what lets QC keep up with an EDC-sized trial. A run the batch
 * cannot take (a soft rule, which calls the model) goes on as its own advance job.
 */
export const advanceTaskRunBatchQueue = defineQueue('qc-advance-task-runs', z.object({ taskRunIds: z.array(z.string().uuid()).min(1).max(MAX_TASK_RUNS_PER_JOB) }), {
  retryLimit: 5,
  expireInSeconds: 15 * 60,
});

/** Scheduled QC: one queue per skill, because a pg-boss 10 schedule is keyed by queue name. */
export const cronQueueName = (skillId: string): string => `qc-cron-${skillId}`;
const cronPayload = z.object({ skillId: z.string().min(1) });
export const cronQueue = (skillId: string) => defineQueue(cronQueueName(skillId), cronPayload);
