import PgBoss from 'pg-boss';
import type { Database } from '../db/connect.js';
import { ClinAgentError, errorMessage, formatIssues } from '../errors.js';
import type { Logger } from '../logger.js';
import { pgliteExecuteSql } from './pglite-adapter.js';
import type { QueueDef } from './queues.js';

/** Named explicitly because send(..., { db }) calls its create_queue function directly. */
export const PGBOSS_SCHEMA = 'pgboss';

/** Enough for any realistic number of processes starting together; each retry waits a little longer. */
const QUEUE_CREATE_ATTEMPTS = 5;

export interface WorkOptions {
  /** Jobs fetched per poll; pg-boss throughput is batchSize per polling interval. */
  batchSize?: number;
  pollingIntervalSeconds?: number;
}

export interface Jobs {
  readonly boss: PgBoss;
  send<T>(queue: QueueDef<T>, data: T, options?: PgBoss.SendOptions): Promise<string | null>;
  /** Handles each job of the batch in turn; a throwing handler fails that job only, and pg-boss retries it. */
  work<T>(queue: QueueDef<T>, handler: (data: T, job: PgBoss.Job<T>) => Promise<void>, options?: WorkOptions): Promise<string>;
  stop(): Promise<void>;
}

export interface CreateJobsOptions {
  /** Maintenance and cron scheduling; off for pure worker processes beyond the first is fine either way. */
  supervise?: boolean;
  schedule?: boolean;
}

/**
 * pg-boss 10 on the shared database: node-postgres by connection string on PostgreSQL, the executeSql
 * adapter over the one PGlite connection when embedded. Several `clinagent worker` processes on one
 * PostgreSQL share the queues through SKIP LOCKED, so each job is handled once.
 */
export async function createJobs(database: Database, logger: Logger, options: CreateJobsOptions = {}): Promise<Jobs> {
  const shared = { schema: PGBOSS_SCHEMA, supervise: options.supervise ?? true, schedule: options.schedule ?? true };
  const boss = database.pglite
    ? new PgBoss({ db: pgliteExecuteSql(database.pglite) as PgBoss.Db, ...shared })
    : new PgBoss({ connectionString: database.connectionString!, max: 4, ...shared });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  await boss.start();
  const created = new Set<string>();

  async function ensureQueue(queue: QueueDef<unknown>, db?: PgBoss.Db): Promise<void> {
    if (created.has(queue.name)) return;
    const queueOptions = { retryLimit: queue.retryLimit, expireInSeconds: queue.expireInSeconds, retryBackoff: true };
    if (db) {
      // send(..., { db }) runs inside the caller's transaction. pg-boss 10's createQueue has no db option, and its
      // own adapter would wait forever on the PGlite lock that transaction holds, so create the queue through the
      // caller's db (create_queue is idempotent). Not remembered: the transaction may still roll back.
      await db.executeSql(`SELECT ${PGBOSS_SCHEMA}.create_queue($1, $2)`, [queue.name, { policy: 'standard', ...queueOptions }]);
      return;
    }
    // createQueue is idempotent in pg-boss 10, but two processes creating the same queue at once can
    // deadlock on PostgreSQL (its partition DDL and the queue row lock in opposite orders); PostgreSQL then
    // aborts one of them. The loser waits for the winner to commit and finds the queue there.
    for (let attempt = 1; ; attempt++) {
      try {
        await boss.createQueue(queue.name, { name: queue.name, ...queueOptions });
        break;
      } catch (error) {
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
        if (await boss.getQueue(queue.name)) break;
        if (attempt >= QUEUE_CREATE_ATTEMPTS) throw error;
      }
    }
    created.add(queue.name);
  }

  return {
    boss,
    async send(queue, data, sendOptions = {}) {
      const parsed = queue.schema.safeParse(data);
      if (!parsed.success) {
        throw new ClinAgentError('VALIDATION_FAILED', `Job for queue ${queue.name} has an invalid payload:\n${formatIssues(parsed.error.issues).join('\n')}`, { queue: queue.name });
      }
      await ensureQueue(queue as QueueDef<unknown>, sendOptions.db);
      return boss.send(queue.name, parsed.data as object, sendOptions);
    },
    async work(queue, handler, workOptions = {}) {
      await ensureQueue(queue as QueueDef<unknown>);
      return boss.work<unknown>(queue.name, { batchSize: workOptions.batchSize ?? 1, pollingIntervalSeconds: workOptions.pollingIntervalSeconds ?? 1 }, async (jobs) => {
        // Settle each job on its own: pg-boss fails a whole batch when the handler throws, which would
        // retry (and so repeat) the jobs of the batch that had already succeeded.
        const failures: Array<{ id: string; message: string }> = [];
        for (const job of jobs) {
          try {
            const parsed = queue.schema.safeParse(job.data);
            if (!parsed.success) {
              throw new ClinAgentError('VALIDATION_FAILED', `Invalid payload for ${queue.name}: ${formatIssues(parsed.error.issues).join('; ')}`);
            }
            await handler(parsed.data, job as PgBoss.Job<typeof parsed.data>);
            await boss.complete(queue.name, job.id);
          } catch (error) {
            logger.warn({ queue: queue.name, jobId: job.id, err: error }, 'job failed; pg-boss will retry it if retries remain');
            failures.push({ id: job.id, message: errorMessage(error) });
          }
        }
        // Failed only once the batch is done: when this returns, pg-boss completes every job of the batch that is
        // active. A job failed mid-batch would be retried meanwhile (its retry delay is 1-2 s) and, if another
        // worker held that retry when a slow batch ended, be marked completed whatever its retry did.
        for (const failure of failures) await boss.fail(queue.name, failure.id, { message: failure.message });
      });
    },
    async stop() {
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    },
  };
}
