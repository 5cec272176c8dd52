/**
 * A job worker process for the multi-worker test (src/core/jobs/multi-worker.test.ts). It starts pg-boss and
 * a worker the way `clinagent worker` does (createJobs on the DATABASE_URL database, work(), stop on SIGTERM,
 * pg-boss before the database), with a handler that records each job it handles in `job_probe`. The insert
 * has no ON CONFLICT: a job handled twice fails loudly on the primary key.
 *
 * Run: DATABASE_URL=postgres://... node --import tsx src/testing/drain-worker.ts
 * Prints `ready <pid>` on stdout once its worker polls; logs go to stderr.
 */
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { untilSignal } from '../cli/signals.js';
import { openDatabase } from '../core/db/connect.js';
import { createJobs } from '../core/jobs/boss.js';
import { defineQueue } from '../core/jobs/queues.js';
import { createLogger } from '../core/logger.js';

/** No retries: a job that fails once (a duplicate handling included) ends failed, where the test sees it. */
export const drainProbeQueue = defineQueue('test-drain-probe', z.object({ n: z.number().int().positive() }), { retryLimit: 0 });

export const CREATE_PROBE_TABLE_SQL = 'CREATE TABLE job_probe (job_id uuid PRIMARY KEY, n int NOT NULL, pid int NOT NULL, handled_at timestamptz NOT NULL)';

/** Small batches at pg-boss's shortest polling interval, so two processes both get a share of the jobs. */
const DRAIN_WORK_OPTIONS = { batchSize: 10, pollingIntervalSeconds: 0.5 } as const;

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('drain-worker needs DATABASE_URL (the PostgreSQL database the test created)\n');
    return 1;
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr);
  const database = await openDatabase({ databaseUrl });
  const pool = database.pool!;
  const jobs = await createJobs(database, logger);
  await jobs.work(
    drainProbeQueue,
    async ({ n }, job) => {
      await pool.query('INSERT INTO job_probe (job_id, n, pid, handled_at) VALUES ($1, $2, $3, now())', [job.id, n, process.pid]);
    },
    DRAIN_WORK_OPTIONS,
  );
  process.stdout.write(`ready ${process.pid}\n`);
  await untilSignal();
  await jobs.stop();
  await database.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main();
}
