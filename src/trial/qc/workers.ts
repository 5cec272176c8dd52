import { newRunWorkerId } from '../../runtime/runs/step-driver.js';
import cronParser from 'cron-parser';
import type { Db } from '../../core/db/connect.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { advanceTaskRun, advanceTaskRuns, taskRunDecision, taskRunDriver, type SopDeps } from '../sop/engine.js';
import type { TaskRun } from '../sop/task-runs.js';
import { registerReviewNoticeWorker } from './review-notices.js';
import { advanceTaskRunBatchQueue, advanceTaskRunQueue } from './queues.js';
import { completeQcRunIfDone } from './qc-runs.js';
import { RUN_RECOVERY_DEFAULTS } from '../../core/config.js';

interface QcWorkerOptions {
  /** Task runs advanced at once by this process. */
  concurrency?: number;
  /** How often to look for runs nobody is advancing (a worker died, a job was lost). */
  sweepIntervalMs?: number;
  /** A pending or lease-less running run untouched this long is re-enqueued. */
  staleMs?: number;
  /** The database only this process can open (embedded): runs other processes held are taken over at start. */
  exclusiveDatabase?: boolean;
}

/**
 * One job per fetch, fetched again at once after a non-empty fetch (eager), so a worker is not capped at one fetch
 * per polling interval. Ten per fetch used to give the same throughput, but a process killed mid-fetch took the
 * nine it had not started with it (active in pg-boss until they expire), and a recovered run's job fetched among
 * them waited for the sweep to queue it again: in the chaos test that made some resumes take 12-15 s.
 */
const JOBS_PER_FETCH = 1;

/**
 * With the default lease (6 s, renewed every 2 s by a live worker), a run left by a killed worker is found by a
 * sweep at most 2 s after its lease lapses, so it continues within about 9 s of the kill (QC_* in core/config.ts).
 */
const { sweepIntervalMs: DEFAULT_SWEEP_INTERVAL_MS, staleMs: DEFAULT_STALE_MS } = RUN_RECOVERY_DEFAULTS;

/** One naming of run owners for every durable run (agent/runs). */
export const newWorkerId = newRunWorkerId;

/**
 * The QC workers of one process: advance task runs (in batches, and one by one) with bounded concurrency, and
 * re-enqueue orphaned runs. Scheduled skills are registered by registerSkillSchedules (src/trial/skills). Safe to run in several processes at once: leases decide who advances a run.
 */
export async function registerQcWorkers(deps: SopDeps & { jobs: Jobs }, options: QcWorkerOptions = {}): Promise<{ sweep(): Promise<number>; stop(): void }> {
  const { jobs } = deps;
  const concurrency = options.concurrency ?? 4;
  for (let i = 0; i < concurrency; i++) {
    await jobs.work(advanceTaskRunQueue, async ({ taskRunId }) => {
      const run = await advanceTaskRun(deps, taskRunId);
      if (run?.qcRunId && run.status !== 'RUNNING') await completeQcRunIfDone(deps.db, run.qcRunId);
    }, { batchSize: JOBS_PER_FETCH, pollingIntervalSeconds: 0.5, eager: true });
    // One batch job per fetch: a fetched job waits for those before it, and its runs would look orphaned meanwhile.
    await jobs.work(advanceTaskRunBatchQueue, async ({ taskRunIds }) => {
      const { runs } = await advanceTaskRuns(deps, taskRunIds);
      for (const qcRunId of new Set(runs.map((run) => run.qcRunId).filter((id): id is string => id !== null))) await completeQcRunIfDone(deps.db, qcRunId);
    }, { batchSize: 1, pollingIntervalSeconds: 0.5, eager: true });
  }

  await registerReviewNoticeWorker({ db: deps.db, jobs, notifier: deps.notifier, logger: deps.logger });

  // Marks runs whose worker died as recovering, and queues one advance job for each run nobody advances.
  const sweeper = await taskRunDriver(deps).startSweep({ intervalMs: options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS, staleMs: options.staleMs ?? DEFAULT_STALE_MS, exclusiveDatabase: options.exclusiveDatabase });

  return sweeper;
}

/** Records the decision and queues the continuation (the driver's decide); the run goes on in whichever worker takes the job. */
export async function reviewTaskRun(deps: { db: Db; jobs: Jobs }, taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment?: string, shownDataHash?: string): Promise<TaskRun> {
  return taskRunDriver(deps).decide(taskRunId, await taskRunDecision(deps.db, taskRunId, decision, reviewer, comment, shownDataHash));
}

/** When a cron expression fires next (UTC), for the console. */
export function nextCronRun(expression: string, from = new Date()): string {
  return cronParser.parseExpression(expression, { currentDate: from, tz: 'UTC' }).next().toDate().toISOString();
}
