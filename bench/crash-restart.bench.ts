import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/core/db/connect.js';
import { ownerRecordPath } from '../src/core/db/data-dir-owner.js';
import { packageRoot } from '../src/core/paths.js';
import { childEnv } from '../src/testing/child-env.js';
import { waitFor } from '../src/testing/wait-for.js';
import { printTable, summarise } from './stats.js';

/**
 * How soon an embedded data folder opens again after its owner is SIGKILLed in the middle of writes (issue 35:
 * "a SIGKILLed embedded server cannot be started again for 20 s"). Each round: a process (hold-data-dir.ts,
 * WRITE=1) opens the folder and commits rows until killed; then the folder is opened again, in this process
 * (lock and PGlite start only) and by a new process (what a restarted server pays: Node, tsx, PGlite). Rows
 * it saw committed and lost are counted after every kill. One last round removes the owner record first, as an older
 * ClinAgent's lock had none: that is the staleness rule (20 s) the takeover replaces.
 */
const ROUNDS = 5;

interface Holder {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}

function startHolder(dataDir: string, env: Record<string, string>): Holder {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/testing/hold-data-dir.ts'], { cwd: packageRoot(), env: childEnv({ DATA_DIR: dataDir, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

function lastCommitted(output: string): number {
  return Math.max(0, ...[...output.matchAll(/committed (\d+)/g)].map((match) => Number(match[1])));
}

/** Starts a writer, lets it commit `rows` more rows, and SIGKILLs it; returns the kill time and what it saw committed. */
async function killWhileWriting(dataDir: string, rows: number): Promise<{ killedAt: number; committed: number }> {
  const writer = startHolder(dataDir, { WRITE: '1' });
  let first = 0;
  await waitFor(async () => {
    const seen = lastCommitted(writer.output());
    if (!first && seen) first = seen;
    return writer.child.exitCode === null ? first && seen >= first + rows : new Error(`the writer exited: ${writer.output()}`);
  }, 'the writer to commit rows', 120_000, 5);
  writer.child.kill('SIGKILL');
  const killedAt = performance.now();
  await writer.exited;
  return { killedAt, committed: lastCommitted(writer.output()) };
}

async function rowsIn(dataDir: string): Promise<{ count: number; max: number }> {
  const database = await openDatabase({ dataDir });
  try {
    const { rows } = (await database.db.execute('select count(*)::int as count, coalesce(max(n), 0)::int as max from crash_rows')) as unknown as { rows: Array<{ count: number; max: number }> };
    return rows[0]!;
  } finally {
    await database.close();
  }
}

export async function main(): Promise<void> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-crash-bench-'));
  const inProcessMs: number[] = [];
  const newProcessMs: number[] = [];
  let lost = 0;
  let gaps = 0;
  // Rows are numbered in commit order from 1, so the highest number kept and the count tell both losses and holes.
  const tally = ({ count, max }: { count: number; max: number }, committed: number) => {
    if (max < committed) lost += committed - max;
    if (count !== max) gaps++;
  };
  try {
    const dataDir = path.join(workDir, 'data');
    for (let round = 0; round < ROUNDS; round++) {
      // Opened again here: the lock, PGlite's start and its crash recovery, one query.
      let kill = await killWhileWriting(dataDir, 200);
      const database = await openDatabase({ dataDir });
      await database.db.execute('select 1');
      inProcessMs.push(performance.now() - kill.killedAt);
      await database.close();
      tally(await rowsIn(dataDir), kill.committed);

      // Opened again by a new process, as a restarted server would.
      kill = await killWhileWriting(dataDir, 200);
      const next = startHolder(dataDir, {});
      await waitFor(async () => next.output().includes('holding') || (next.child.exitCode !== null && new Error(`the new process exited: ${next.output()}`)), 'the new process to open the folder', 120_000, 5);
      newProcessMs.push(performance.now() - kill.killedAt);
      next.child.kill('SIGTERM');
      await next.exited;

      tally(await rowsIn(dataDir), kill.committed);
    }

    // The rule without an owner record: the lock goes stale first.
    const kill = await killWhileWriting(dataDir, 50);
    await rm(ownerRecordPath(dataDir));
    const database = await waitFor(() => openDatabase({ dataDir }).catch(() => undefined), 'the stale lock to be taken over', 60_000, 100);
    const staleMs = performance.now() - kill.killedAt;
    await database.close();
    tally(await rowsIn(dataDir), kill.committed);

    const inProcess = summarise(inProcessMs);
    const newProcess = summarise(newProcessMs);
    printTable(`Embedded database: SIGKILL in the middle of writes, then open again (${ROUNDS} rounds each)`, [
      { 'opened again by': 'this process (lock + PGlite start)', 'p50 ms': Math.round(inProcess.p50), 'max ms': Math.round(Math.max(...inProcessMs)), 'vs staleness rule': `${(staleMs / inProcess.p50).toFixed(0)}x sooner` },
      { 'opened again by': 'a new process (node + tsx + PGlite)', 'p50 ms': Math.round(newProcess.p50), 'max ms': Math.round(Math.max(...newProcessMs)), 'vs staleness rule': `${(staleMs / newProcess.p50).toFixed(0)}x sooner` },
      { 'opened again by': 'this process, lock without owner record', 'p50 ms': Math.round(staleMs), 'max ms': Math.round(staleMs), 'vs staleness rule': '(the rule: 20 s)' },
    ]);
    console.log(`committed rows lost: ${lost}; kills after which the table had gaps: ${gaps} (target: 0 and 0)`);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
