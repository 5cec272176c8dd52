import PgBoss from 'pg-boss';
import type { Database } from '../db/connect.js';
import { ClinAgentError, errorMessage, formatIssues } from '../errors.js';
import type { Logger } from '../logger.js';
import { pgliteExecuteSql } from './pglite-adapter.js';
import type { QueueDef } from './queues.js';

/** Named explicitly because send(..., { db }) calls its create_queue function directly. */
const PGBOSS_SCHEMA = 'pgboss';

/** Enough for any realistic number of processes starting together; each retry waits a little longer. */
const QUEUE_CREATE_ATTEMPTS = 5;

export interface WorkOptions {
  /** Jobs fetched per poll; pg-boss throughput is batchSize per polling interval. */
  batchSize?: number;
  pollingIntervalSeconds?: number;
  /** Fetch again at once after a non-empty fetch instead of waiting out the polling interval (long-running batches). */
  eager?: boolean;
}

/** Options of `sendMany`: the jobs go in one statement, so the same options apply to all of them. */
export interface SendManyOptions<T> {
  /** Run inside the caller's transaction (see `pgliteExecuteSql`). */
  db?: PgBoss.Db;
  /** With `singletonSeconds`: a payload whose key already has a job in the current time slot is skipped. */
  singletonKey?: (payload: T) => string;
  singletonSeconds?: number;
  /** Fetched before jobs of a lower priority (default 0) queued earlier. */
  priority?: number;
}

export interface CronSchedule {
  queue: string;
  cron: string;
  /** The payload each scheduled job carries. */
  data: unknown;
  tz: string;
}

/**
 * Everything areas need from the job queue. Areas go through these methods only, never pg-boss or its tables, so
 * the queue (its schema, its SQL, its version) can change in one place.
 */
export interface Jobs {
  /** pg-boss itself, for this module's own tests and the database role tests in core; areas use the methods below. */
  readonly boss: PgBoss;
  send<T>(queue: QueueDef<T>, data: T, options?: PgBoss.SendOptions): Promise<string | null>;
  /**
   * Many jobs in one INSERT (10 000 QC runs would otherwise be 10 000 round trips). Every payload is checked
   * against the queue schema first; one bad payload sends none. pg-boss 10's bulk insert returns no job ids.
   */
  sendMany<T>(queue: QueueDef<T>, payloads: readonly T[], options?: SendManyOptions<T>): Promise<void>;
  /** Sends `data` to `queue` on every tick of `cron` (UTC unless `tz`); one schedule per queue, replaced if it exists. */
  schedule<T>(queue: QueueDef<T>, cron: string, data: T, options?: { tz?: string }): Promise<void>;
  schedules(): Promise<CronSchedule[]>;
  /** Removes the schedule of the queue named `queueName`, if it has one (a skill whose cron was removed). */
  unschedule(queueName: string): Promise<void>;
  /**
   * Which of `values` already have a job waiting in `queue` (created, or failed and waiting for its retry) whose
   * payload field `field` equals the value. Jobs being worked on do not count: their worker may be dead.
   */
  isQueued<T>(queue: QueueDef<T>, field: keyof T & string, values: readonly string[]): Promise<Set<string>>;
  /** isQueued for a payload field that lists values (a batch job's `taskRunIds`): which values some waiting job lists. */
  isQueuedInList<T>(queue: QueueDef<T>, field: keyof T & string, values: readonly string[]): Promise<Set<string>>;
  /** Handles each job of the batch in turn; a throwing handler fails that job only, and pg-boss retries it. */
  work<T>(queue: QueueDef<T>, handler: (data: T, job: PgBoss.Job<T>) => Promise<void>, options?: WorkOptions): Promise<string>;
  /** The pollers this process runs (one per `work` call), by queue: what a process works on, and how many ways. */
  workers(): Array<{ id: string; queue: string }>;
  stop(): Promise<void>;
}

interface CreateJobsOptions {
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
  /** Every poller `work` started, by queue; pg-boss 10 types no way to list its workers. */
  const pollers: Array<{ id: string; queue: string }> = [];

  async function ensureQueue(queue: QueueDef<unknown>, db?: PgBoss.Db): Promise<void> {
    if (created.has(queue.name)) return;
    const queueOptions = { policy: queue.policy ?? 'standard', retryLimit: queue.retryLimit, expireInSeconds: queue.expireInSeconds, retryBackoff: true };
    if (db) {
      // send(..., { db }) runs inside the caller's transaction. pg-boss 10's createQueue has no db option, and its
      // own adapter would wait forever on the PGlite lock that transaction holds, so create the queue through the
      // caller's db (create_queue is idempotent). Not remembered: the transaction may still roll back.
      await db.executeSql(`SELECT ${PGBOSS_SCHEMA}.create_queue($1, $2)`, [queue.name, queueOptions]);
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

  function parsePayload<T>(queue: QueueDef<T>, data: T, label = 'Job'): T {
    const parsed = queue.schema.safeParse(data);
    if (!parsed.success) {
      throw new ClinAgentError('VALIDATION_FAILED', `${label} for queue ${queue.name} has an invalid payload:\n${formatIssues(parsed.error.issues).join('\n')}`, { queue: queue.name });
    }
    return parsed.data;
  }

  return {
    boss,
    async send(queue, data, sendOptions = {}) {
      const payload = parsePayload(queue, data);
      await ensureQueue(queue as QueueDef<unknown>, sendOptions.db);
      return boss.send(queue.name, payload as object, sendOptions);
    },
    async sendMany(queue, payloads, sendOptions = {}) {
      if (!payloads.length) return;
      const parsed = payloads.map((data, i) => parsePayload(queue, data, `Job ${i + 1} of ${payloads.length}`));
      await ensureQueue(queue as QueueDef<unknown>, sendOptions.db);
      // insert() joins the queue row for its defaults (backoff), but takes retry and expiry per job: give the queue's.
      const rows = parsed.map((data) => ({
        name: queue.name,
        data: data as object,
        retryLimit: queue.retryLimit,
        expireInSeconds: queue.expireInSeconds,
        ...(sendOptions.singletonKey ? { singletonKey: sendOptions.singletonKey(data), singletonSeconds: sendOptions.singletonSeconds } : {}),
        ...(sendOptions.priority ? { priority: sendOptions.priority } : {}),
      }));
      await boss.insert(rows, sendOptions.db ? { db: sendOptions.db } : {});
    },
    async schedule(queue, cron, data, scheduleOptions = {}) {
      const payload = parsePayload(queue, data, 'Scheduled job');
      // A schedule refers to its queue (foreign key), so the queue exists before the first tick.
      await ensureQueue(queue as QueueDef<unknown>);
      await boss.schedule(queue.name, cron, payload as object, { tz: scheduleOptions.tz ?? 'UTC' });
    },
    async schedules() {
      // The rows of pg-boss's schedule table; its type omits the timezone column.
      const rows = (await boss.getSchedules()) as Array<PgBoss.Schedule & { timezone?: string }>;
      return rows.map((s) => ({ queue: s.name, cron: s.cron, data: s.data ?? null, tz: s.timezone ?? s.options?.tz ?? 'UTC' }));
    },
    async unschedule(queueName) {
      await boss.unschedule(queueName);
    },
    async isQueued(queue, field, values) {
      if (!values.length) return new Set();
      const { rows } = (await boss.getDb().executeSql(
        `SELECT DISTINCT data->>$2 AS key FROM ${PGBOSS_SCHEMA}.job WHERE name = $1 AND state IN ('created', 'retry') AND data->>$2 = ANY($3::text[])`,
        [queue.name, field, [...values]],
      )) as { rows: Array<{ key: string }> };
      return new Set(rows.map((r) => r.key));
    },
    async isQueuedInList(queue, field, values) {
      if (!values.length) return new Set();
      const { rows } = (await boss.getDb().executeSql(
        `SELECT DISTINCT listed.value AS key FROM ${PGBOSS_SCHEMA}.job, jsonb_array_elements_text(data->$2) AS listed(value)
         WHERE name = $1 AND state IN ('created', 'retry') AND jsonb_typeof(data->$2) = 'array' AND listed.value = ANY($3::text[])`,
        [queue.name, field, [...values]],
      )) as { rows: Array<{ key: string }> };
      return new Set(rows.map((r) => r.key));
    },
    async work(queue, handler, workOptions = {}) {
      await ensureQueue(queue as QueueDef<unknown>);
      let workerId: string | undefined;
      workerId = await boss.work<unknown>(queue.name, { batchSize: workOptions.batchSize ?? 1, pollingIntervalSeconds: workOptions.pollingIntervalSeconds ?? 1 }, async (jobs) => {
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
        // Straight on to the next fetch: pg-boss would otherwise wait out the rest of its polling interval after
        // every job, which caps a worker at two jobs a second however fast they are.
        if (workOptions.eager && jobs.length && workerId) boss.notifyWorker(workerId);
      });
      pollers.push({ id: workerId, queue: queue.name });
      return workerId;
    },
    workers: () => [...pollers],
    async stop() {
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    },
  };
}
