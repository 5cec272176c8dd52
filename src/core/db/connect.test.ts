import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../../testing/child-env.js';
import { killRunningClis, runCli } from '../../testing/run-cli.js';
import { waitFor } from '../../testing/wait-for.js';
import { ClinAgentError } from '../errors.js';
import { packageRoot } from '../paths.js';
import { openDatabase, type Database } from './connect.js';

/**
 * The embedded database folder belongs to one process: a second one (`clinagent login-link` while `serve`
 * runs) must be refused with what to do, not silently work on its own copy of the data.
 */

let workDir: string;
const holders = new Set<ChildProcess>();

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-lock-'));
});

afterAll(async () => {
  killRunningClis();
  for (const child of holders) child.kill('SIGKILL');
  await rm(workDir, { recursive: true, force: true });
});

/** Starts hold-data-dir.ts on `dataDir` and resolves once it owns the folder. */
async function startHolder(dataDir: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/hold-data-dir.ts'], { cwd: packageRoot(), env: childEnv({ DATA_DIR: dataDir, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  holders.add(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(async () => output.includes('holding') || child.exitCode !== null, 'the holder process to open the folder', 90_000);
  if (!output.includes('holding')) throw new Error(`the holder process exited: ${output}`);
  return { child, output: () => output };
}

async function refusal(promise: Promise<unknown>): Promise<ClinAgentError> {
  const error = await promise.then((opened) => (opened as Database).close().then(() => new Error('expected the folder to be refused')), (e: unknown) => e);
  if (!ClinAgentError.isInstance(error)) throw error;
  return error;
}

describe('openDatabase on an embedded data folder', () => {
  it('refuses a second process while one holds the folder, naming what to do, and lets it in after the first closes', async () => {
    const dataDir = path.join(workDir, 'served');
    const first = await openDatabase({ dataDir });
    let closed = false;
    try {
      const second = await runCli(['login-link'], { DATA_DIR: dataDir });

      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toMatch(/^clinagent login-link: DATABASE_IN_USE: The embedded database in .*served is in use by another ClinAgent process/);
      expect(second.stderr).toContain('Stop the server first');
      expect(second.stderr).toContain('DATABASE_URL');
      // The same holds inside one process: a second open of the folder is refused too.
      const again = await refusal(openDatabase({ dataDir }));
      expect(again).toMatchObject({ code: 'DATABASE_IN_USE', status: 409, details: { dataDir } });

      await first.close();
      closed = true;
      expect(existsSync(`${dataDir}.lock`)).toBe(false);
      const afterClose = await runCli(['login-link'], { DATA_DIR: dataDir });
      expect({ code: afterClose.code, stderr: afterClose.stderr }).toEqual({ code: 0, stderr: '' });
      expect(afterClose.stdout).toMatch(/sign-in link .*\n\s+http:\/\/\S+\/\?login=login_\S+\n$/);
    } finally {
      if (!closed) await first.close();
    }
    // Two CLI processes each start tsx, open PGlite and migrate: on a busy 2-core machine that takes a while.
  }, 180_000);

  it('closes twice without error and releases the lock once', async () => {
    const dataDir = path.join(workDir, 'twice');
    const database = await openDatabase({ dataDir });
    await Promise.all([database.close(), database.close()]);
    await database.close();
    const reopened = await openDatabase({ dataDir });
    await reopened.close();
  });

  it('opens a folder again at once after its owner was SIGKILLed, without waiting for the lock to go stale', async () => {
    const dataDir = path.join(workDir, 'crashed');
    const holder = await startHolder(dataDir);
    const opened = await refusal(openDatabase({ dataDir }));
    expect(opened.code).toBe('DATABASE_IN_USE');

    const killedAt = Date.now();
    holder.child.kill('SIGKILL');
    await new Promise((resolve) => holder.child.once('exit', resolve));
    // A kill -9 leaves the lock behind, fresh: the 20 s staleness rule alone would refuse for 20 s.
    expect(existsSync(`${dataDir}.lock`)).toBe(true);
    const database = await openDatabase({ dataDir });
    const openedMs = Date.now() - killedAt;
    try {
      expect(await database.db.execute('select 1 as one')).toMatchObject({ rows: [{ one: 1 }] });
      // Starting PGlite in this process is most of it (the lock takes milliseconds, data-dir-lock.test.ts);
      // anything near 20 s would mean the staleness rule let it in.
      expect(openedMs).toBeLessThan(10_000);
    } finally {
      await database.close();
    }
  }, 180_000);

  it('keeps every committed row when the owner is SIGKILLed in the middle of writes', async () => {
    const dataDir = path.join(workDir, 'killed-writing');
    for (let round = 1; round <= 3; round++) {
      const holder = await startHolder(dataDir, { WRITE: '1' });
      let lastCommitted = 0;
      await waitFor(async () => {
        lastCommitted = Math.max(0, ...[...holder.output().matchAll(/committed (\d+)/g)].map((match) => Number(match[1])));
        return lastCommitted >= round * 150;
      }, `round ${round}: the holder to commit rows`, 90_000, 10);
      holder.child.kill('SIGKILL');
      await new Promise((resolve) => holder.child.once('exit', resolve));
      const printed = Math.max(...[...holder.output().matchAll(/committed (\d+)/g)].map((match) => Number(match[1])));

      // PostgreSQL's crash recovery replays the WAL; every commit the holder saw return is there, and the
      // table is whole (no gaps: rows are numbered in commit order).
      const database = await openDatabase({ dataDir });
      try {
        const { rows } = (await database.db.execute('select count(*)::int as count, coalesce(max(n), 0)::int as max from crash_rows')) as unknown as { rows: Array<{ count: number; max: number }> };
        expect(rows[0]!.max).toBeGreaterThanOrEqual(printed);
        expect(rows[0]!.count).toBe(rows[0]!.max);
      } finally {
        await database.close();
      }
    }
  }, 300_000);

  it('lets the next process in at once when the owner stops on SIGTERM', async () => {
    const dataDir = path.join(workDir, 'stopped');
    const holder = await startHolder(dataDir);
    holder.child.kill('SIGTERM');
    expect(await new Promise((resolve) => holder.child.once('exit', resolve))).toBe(0);

    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    const database = await openDatabase({ dataDir });
    await database.close();
  }, 180_000);
});
