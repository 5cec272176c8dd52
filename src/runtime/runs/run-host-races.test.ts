import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '../../core/db/schema/audit.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { openDatabase, queryRows, sql, type Database } from '../../core/db/connect.js';
import { createJobs, type Jobs } from '../../core/jobs/boss.js';
import { createLogger } from '../../core/logger.js';
import { openTestDatabase, testEngines, TEST_AUDIT_KEY } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { advanceAgentRunQueue, createRunHost, type RunHost } from './run-host.js';
import { thisProcessLeasePrefix } from './step-driver.js';

/** A process with a run host: its own database connection (PostgreSQL) and its own pg-boss, on the shared database. */
interface Process {
  database: Database;
  jobs: Jobs;
  host: RunHost;
  advanced: string[];
}

/**
 * The run host where two processes meet, or one process is wired twice: two hosts sweeping the same orphans at once,
 * a family registered twice, workers started twice at once. Both engines; on PGlite the two "processes" share its one
 * connection, as two hosts of one process would.
 */
describe.each(testEngines())('the run host under races on %s', (engine) => {
  let shared: Database & { url?: string };
  const processes: Process[] = [];

  async function startProcess(): Promise<Process> {
    const database = engine === 'postgres' ? await openDatabase({ databaseUrl: shared.url!, poolSize: 4, auditKey: TEST_AUDIT_KEY }) : shared;
    const jobs = await createJobs(database, createLogger('silent'), { supervise: false, schedule: false });
    const host = createRunHost({ db: database.db, jobs, logger: createLogger('silent') });
    const advanced: string[] = [];
    host.register({ prefix: 'race:', label: 'race', advance: async (runId) => advanced.push(runId) });
    const started = { database, jobs, host, advanced };
    processes.push(started);
    return started;
  }

  beforeAll(async () => {
    shared = await openTestDatabase({ engine });
  });
  afterAll(async () => {
    for (const { database, jobs } of processes.reverse()) {
      await jobs.stop();
      if (database !== shared) await database.close();
    }
    await shared?.close();
  });

  const insertRun = async (values: Partial<typeof agentRuns.$inferInsert>) => (await shared.db.insert(agentRuns).values({ kind: 'race:agent', status: 'PENDING', currentNode: 'start', ...values }).returning())[0]!;
  const jobsFor = async (runId: string) =>
    (await queryRows<{ count: number }>(shared.db, sql`SELECT count(*)::int AS count FROM pgboss.job WHERE name = ${advanceAgentRunQueue.name} AND data->>'runId' = ${runId}`))[0]!.count;

  it('queues an orphan once and notes its recovery once when two processes sweep it at the same moment', async () => {
    const [a, b] = [await startProcess(), await startProcess()];
    const aMinuteAgo = new Date(Date.now() - 60_000);
    // A run whose worker died mid-step, one whose job was lost, and one of a kind neither process runs.
    const abandoned = await insertRun({ status: 'RUNNING', leaseOwner: 'dead-worker#1', leaseUntil: new Date(aMinuteAgo.getTime() + 1_000), updatedAt: aMinuteAgo });
    const lost = await insertRun({ updatedAt: aMinuteAgo });
    const unknown = await insertRun({ kind: 'elsewhere:agent', updatedAt: aMinuteAgo });

    const swept = await Promise.all([a.host.sweep(1_000), b.host.sweep(1_000)]);
    // Each may count what it found; what matters is what the database holds after both.
    expect(swept.every((count) => count <= 2)).toBe(true);
    expect(await jobsFor(abandoned.id)).toBe(1);
    expect(await jobsFor(lost.id)).toBe(1);
    expect(await jobsFor(unknown.id)).toBe(0);
    const recovered = await shared.db.select({ entityId: auditLog.entityId }).from(auditLog).where(and(eq(auditLog.action, 'recovered'), inArray(auditLog.entityId, [abandoned.id, lost.id, unknown.id])));
    expect(recovered.map((r) => r.entityId)).toEqual([abandoned.id]);
    const [row] = await shared.db.select().from(agentRuns).where(eq(agentRuns.id, abandoned.id));
    expect(row!.recoveredAt).toBeInstanceOf(Date);

    // A third sweep soon after queues nothing more: the lost run's job waits, the abandoned run's is the same slot's.
    await a.host.sweep(1_000);
    expect(await jobsFor(abandoned.id)).toBe(1);
    expect(await jobsFor(lost.id)).toBe(1);
  });

  it('queues a run again when it is stranded a second time within the minute (a worker took it over and died too)', async () => {
    const [a] = processes.length ? processes : [await startProcess()];
    const aMinuteAgo = new Date(Date.now() - 60_000);
    const run = await insertRun({ status: 'RUNNING', leaseOwner: 'dead-worker#1', leaseUntil: new Date(aMinuteAgo.getTime() + 1_000), updatedAt: aMinuteAgo });
    await a!.host.sweep(1_000);
    expect(await jobsFor(run.id)).toBe(1);
    // The sweep's job was taken by a worker that saved nothing and was killed too: a new lease, lapsed again. Before the
    // fix this second stranding shared the first one's singleton slot (key = run id, 60 s), so its job was dropped and
    // the run sat until the next minute (the 28-30 s recoveries of issue 35, a minute and more in the chaos test).
    const later = new Date(aMinuteAgo.getTime() + 20_000);
    await shared.db.update(agentRuns).set({ leaseOwner: 'dead-worker#2', leaseUntil: new Date(later.getTime() + 1_000), updatedAt: later }).where(eq(agentRuns.id, run.id));
    await a!.host.sweep(1_000);
    expect(await jobsFor(run.id)).toBe(2);
    // Seen again in the same state, it is not queued a third time.
    await a!.host.sweep(1_000);
    expect(await jobsFor(run.id)).toBe(2);
  });

  it('queues a recovered run again when its job was fetched by a process that died before running it', async () => {
    const [a] = processes.length ? processes : [await startProcess()];
    const aMinuteAgo = new Date(Date.now() - 60_000);
    const run = await insertRun({ status: 'RUNNING', leaseOwner: 'dead-worker#4', leaseUntil: new Date(aMinuteAgo.getTime() + 1_000), updatedAt: aMinuteAgo });
    await a!.host.sweep(1_000);
    expect(await jobsFor(run.id)).toBe(1);
    // A process fetches the job (it is active now) and is killed before it runs it: the job never finishes, the run
    // never moves. Before the fix the next sweeps found the same stranding and queued nothing for the rest of the minute.
    await waitFor(async () => {
      const [job] = await a!.jobs.boss.fetch<{ runId: string }>(advanceAgentRunQueue.name);
      return job?.data.runId === run.id;
    }, 'the recovery job to be fetched', 5_000, 10);
    await waitFor(async () => (await a!.host.sweep(1_000), (await jobsFor(run.id)) === 2), 'a second job for the run once it is stale again', 5_000, 200);
  });

  it('on a database only it can open, takes over at start the runs another (so dead) process still leases', async () => {
    const host = createRunHost({ db: shared.db, jobs: processes[0]?.jobs ?? (await startProcess()).jobs, logger: createLogger('silent') });
    host.register({ prefix: 'race:', label: 'race', advance: async () => undefined });
    const aMinuteAgo = new Date(Date.now() - 60_000);
    // Killed a minute ago with a fresh lease (it had just renewed it): under the lease rule alone it waits out the lease.
    const held = await insertRun({ status: 'RUNNING', leaseOwner: 'old-host:4242:abc123#1', leaseUntil: new Date(Date.now() + 60_000), updatedAt: aMinuteAgo });
    const mine = await insertRun({ status: 'RUNNING', leaseOwner: `${thisProcessLeasePrefix()}abc123#2`, leaseUntil: new Date(Date.now() + 60_000), updatedAt: aMinuteAgo });
    const workers = await host.start({ concurrency: 1, sweepIntervalMs: 60_000, staleMs: 1_000, exclusiveDatabase: true });
    workers.stop();
    expect(await jobsFor(held.id)).toBe(1);
    expect(await jobsFor(mine.id)).toBe(0);
  });

  it('puts the job of a run it recovers ahead of work queued before it, so a backlog does not hold the recovery up', async () => {
    const [a] = processes.length ? processes : [await startProcess()];
    // A backlog: runs whose jobs wait (each job for its own run, as a batch hands runs back at a model node).
    const backlog = await Promise.all(Array.from({ length: 5 }, () => insertRun({})));
    await a!.jobs.sendMany(advanceAgentRunQueue, backlog.map((run) => ({ runId: run.id })));
    const aMinuteAgo = new Date(Date.now() - 60_000);
    const abandoned = await insertRun({ status: 'RUNNING', leaseOwner: 'dead-worker#3', leaseUntil: new Date(aMinuteAgo.getTime() + 1_000), updatedAt: aMinuteAgo });
    await a!.host.sweep(1_000);
    // Jobs of earlier tests may wait too; of this test's, the recovered run's comes first.
    const ours = new Set([abandoned.id, ...backlog.map((run) => run.id)]);
    let first: string | undefined;
    for (let fetched = 0; !first && fetched < 50; fetched++) {
      const [job] = await a!.jobs.boss.fetch<{ runId: string }>(advanceAgentRunQueue.name);
      if (!job) break;
      if (ours.has(job.data.runId)) first = job.data.runId;
    }
    expect(first).toBe(abandoned.id);
  });

  it('drops the job of a run of a kind no family here runs, and leaves the run as it is', async () => {
    const [a] = processes.length ? processes : [await startProcess()];
    const unknown = await insertRun({ kind: 'elsewhere:agent' });
    await a!.host.advance(unknown.id);
    expect(a!.advanced).not.toContain(unknown.id);
    const [row] = await shared.db.select().from(agentRuns).where(eq(agentRuns.id, unknown.id));
    expect(row).toMatchObject({ status: 'PENDING', leaseOwner: null });
  });

  it('refuses a family registered twice, naming it, and keeps the first', async () => {
    const { host, advanced } = await startProcess();
    const second: string[] = [];
    expect(() => host.register({ prefix: 'race:', label: 'race again', advance: async (runId) => second.push(runId) })).toThrow(/"race:" is registered already/);
    // A prefix that would start another's (or be started by it) cannot be written: one ":", at the end.
    expect(() => host.register({ prefix: 'race:sub:', label: 'a part of race', advance: async () => undefined })).toThrow(/ending with ":"/);
    expect(host.families()).toEqual(['race:']);
    const run = await insertRun({});
    await host.advance(run.id);
    expect(advanced).toEqual([run.id]);
    expect(second).toEqual([]);
  });

  it('sweeps only the kinds a family names, even when its prefix holds a LIKE wildcard ("_")', async () => {
    const { host } = await startProcess();
    host.register({ prefix: 'under_score:', label: 'under_score', advance: async () => undefined });
    const aMinuteAgo = new Date(Date.now() - 60_000);
    const own = await insertRun({ kind: 'under_score:agent', updatedAt: aMinuteAgo });
    const lookalike = await insertRun({ kind: 'underXscore:agent', updatedAt: aMinuteAgo });
    await host.sweep(1_000);
    expect(await jobsFor(own.id)).toBe(1);
    expect(await jobsFor(lookalike.id)).toBe(0);
    expect(await host.sweepStore().get(shared.db, lookalike.id)).toBeUndefined();
  });

  it('starts one set of workers when start is called twice at once', async () => {
    const { host, jobs } = await startProcess();
    const [first, second] = await Promise.all([
      host.start({ concurrency: 2, sweepIntervalMs: 60_000, staleMs: 60_000 }),
      host.start({ concurrency: 2, sweepIntervalMs: 60_000, staleMs: 60_000 }),
    ]);
    try {
      expect(second).toBe(first);
      expect(jobs.workers().filter((w) => w.queue === advanceAgentRunQueue.name)).toHaveLength(2);
    } finally {
      first.stop();
    }
  });
});
