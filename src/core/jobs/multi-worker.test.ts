import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATE_PROBE_TABLE_SQL, drainProbeQueue } from '../../testing/drain-worker.js';
import { createThrowawayDatabase } from '../../testing/test-database.js';
import { packageRoot } from '../paths.js';
import { openDatabase, type Database } from '../db/connect.js';
import { runMigrations } from '../db/migrate.js';
import { createLogger } from '../logger.js';
import { createJobs, type Jobs } from './boss.js';
import { waitFor } from '../../testing/wait-for.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const JOB_COUNT = 500;

interface WorkerProcess {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

/** Starts src/testing/drain-worker.ts, which runs createJobs + work() as `clinagent worker` does. */
function startWorker(databaseUrl: string): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/drain-worker.ts'], {
    cwd: packageRoot(),
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const worker: WorkerProcess = { child, stdout: '', stderr: '', exited: once(child, 'exit').then(([code]) => code as number | null) };
  child.stdout!.on('data', (chunk: Buffer) => (worker.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (worker.stderr += chunk.toString()));
  return worker;
}

function isReady(worker: WorkerProcess): boolean {
  if (worker.child.exitCode !== null) throw new Error(`a drain worker exited before it was ready:\n${worker.stderr}`);
  return worker.stdout.includes('ready');
}

async function stopWorker(worker: WorkerProcess, graceMs: number): Promise<number | null> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return worker.exited;
  worker.child.kill('SIGTERM');
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), graceMs);
  try {
    return await worker.exited;
  } finally {
    clearTimeout(timer);
  }
}

describe.runIf(serverUrl)(`two worker processes on real PostgreSQL${serverUrl ? '' : ' (skipped: needs TEST_DATABASE_URL)'}`, () => {
  let drop: (() => Promise<void>) | undefined;
  let database: Database;
  let jobs: Jobs;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    const throwaway = await createThrowawayDatabase(serverUrl!);
    drop = throwaway.drop;
    database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 4 });
    await runMigrations(database);
    await database.pool!.query(CREATE_PROBE_TABLE_SQL);
    jobs = await createJobs(database, createLogger('silent'));
    workers.push(startWorker(throwaway.url), startWorker(throwaway.url));
    await Promise.all(workers.map((worker) => waitFor(async () => isReady(worker), 'a drain worker to start', 30_000)));
  });

  afterAll(async () => {
    // Children first, even when the test failed: they hold connections that would keep the database alive.
    await Promise.all(workers.map((worker) => stopWorker(worker, 5_000)));
    await jobs?.stop();
    await database?.close();
    await drop?.();
  });

  it('drains 500 jobs with each job handled once, by both processes', async () => {
    const sentIds: string[] = [];
    for (let n = 1; n <= JOB_COUNT; n++) sentIds.push((await jobs.send(drainProbeQueue, { n }))!);
    const pool = database.pool!;

    const states = await waitFor(
      async () => {
        const { rows } = await pool.query<{ state: string; count: number }>('SELECT state, count(*)::int AS count FROM pgboss.job WHERE name = $1 GROUP BY state', [drainProbeQueue.name]);
        const byState = Object.fromEntries(rows.map((row) => [row.state, row.count]));
        const settled = (byState.completed ?? 0) + (byState.failed ?? 0);
        return settled === JOB_COUNT && byState;
      },
      `${JOB_COUNT} jobs to settle`,
      45_000,
    );

    expect(states).toEqual({ completed: JOB_COUNT });
    const { rows: probe } = await pool.query<{ rows: number; jobs: number; numbers: number }>(
      'SELECT count(*)::int AS rows, count(DISTINCT job_id)::int AS jobs, count(DISTINCT n)::int AS numbers FROM job_probe',
    );
    expect(probe[0]).toEqual({ rows: JOB_COUNT, jobs: JOB_COUNT, numbers: JOB_COUNT });
    const { rows: handledIds } = await pool.query<{ job_id: string }>('SELECT job_id FROM job_probe');
    expect(new Set(handledIds.map((row) => row.job_id))).toEqual(new Set(sentIds));
    const { rows: perPid } = await pool.query<{ pid: number; count: number }>('SELECT pid, count(*)::int AS count FROM job_probe GROUP BY pid');
    const byPid = (a: number, b: number) => a - b;
    expect(perPid.map((row) => row.pid).sort(byPid)).toEqual(workers.map((worker) => worker.child.pid!).sort(byPid));
    expect(perPid.every((row) => row.count > 0)).toBe(true);
    for (const worker of workers) expect(worker.stderr).not.toMatch(/duplicate key|job failed/);

    // Both stop cleanly on SIGTERM, pg-boss first, as `clinagent worker` does.
    expect(await Promise.all(workers.map((worker) => stopWorker(worker, 15_000)))).toEqual([0, 0]);
  });
});
