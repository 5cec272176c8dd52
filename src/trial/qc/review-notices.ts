import { z } from 'zod';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { defineQueue } from '../../core/jobs/queues.js';
import type { Logger } from '../../core/logger.js';
import type { ReviewNotifier } from '../sop/notify.js';
import { getTaskRun } from '../sop/task-runs.js';

/**
 * Review notices go out as jobs, outside the run's critical path: the run is saved as suspended first, and a
 * webhook that hangs or fails costs a retry of this job (with backoff), never a worker held by a QC run.
 */
const reviewNoticeQueue = defineQueue('qc-review-notice', z.object({ taskRunId: z.string().uuid() }), {
  retryLimit: 5,
  expireInSeconds: 60,
});

export function queueReviewNotice(jobs: Jobs): (taskRunId: string) => Promise<void> {
  return async (taskRunId) => {
    await jobs.send(reviewNoticeQueue, { taskRunId }, { singletonKey: taskRunId, singletonSeconds: 60 });
  };
}

export async function registerReviewNoticeWorker(deps: { db: Db; jobs: Jobs; notifier: ReviewNotifier; logger: Logger }): Promise<void> {
  await deps.jobs.work(reviewNoticeQueue, async ({ taskRunId }) => {
    const run = await getTaskRun(deps.db, taskRunId);
    // Decided (or gone) before the notice went out: nobody needs to be asked any more.
    if (!run || run.status !== 'SUSPENDED' || !run.reviewRequest) return;
    const queries = await deps.db
      .select({ field: pendingActions.field, message: pendingActions.message, severity: pendingActions.severity })
      .from(pendingActions)
      .where(and(eq(pendingActions.projectId, run.projectId), eq(pendingActions.heldByTaskRunId, run.id)));
    const result = await deps.notifier.notify({
      taskRunId: run.id, projectId: run.projectId, skillId: run.skillId, recordId: run.recordId, node: run.reviewRequest.node,
      description: run.reviewRequest.description, queries,
    });
    if (!result.delivered) {
      deps.logger.warn({ taskRunId, error: result.error }, 'review notification not delivered; the job will retry');
      throw new Error(`review notice for task run ${taskRunId} not delivered: ${result.error}`);
    }
  });
}
