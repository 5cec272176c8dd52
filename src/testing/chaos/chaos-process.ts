import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/paths.js';
import { childEnv } from '../child-env.js';

export type ProcessKind = 'server' | 'worker';

/** How much of a process's output a failure shows: the end, where it stopped. */
const OUTPUT_TAIL_CHARS = 40_000;

interface ChaosProcessOptions {
  name: string;
  kind: ProcessKind;
  env: Record<string, string>;
  /** The server's URL (its PORT and HOST are in env): it is up once /api/health answers. */
  url?: string;
  /** How long one start may take, retries included (an embedded folder whose dead owner's lock must go stale). */
  startDeadlineMs: number;
}

/** One start of the process: when it was spawned, when it was up, and how many spawns that took. */
export interface StartRecord {
  spawnedAt: number;
  readyAt: number;
  attempts: number;
}

/**
 * One `clinagent serve` or `clinagent worker` as an operator runs it (the CLI from source, configured by environment
 * only), which the chaos test SIGKILLs and starts again. A process that exits on its own is recorded (the test fails
 * on it, naming the process and its output) and started again, as a supervisor would.
 */
export function chaosProcess(options: ChaosProcessOptions) {
  const entry = path.join(packageRoot(), 'src', 'cli', 'entry.ts');
  let child: ChildProcess | undefined;
  let up = false;
  let tail = '';
  let partialLine = '';
  let lostLeases = 0;
  /** Pids that logged "worker started", read line by line (the tail may have moved past it). */
  const workerStarted = new Set<number>();
  let expectingExit = false;
  const exitsOnTheirOwn: Array<{ pid: number; code: number | null; signal: string | null; output: string }> = [];
  const starts: StartRecord[] = [];

  function onOutput(chunk: Buffer): void {
    const text = chunk.toString();
    tail = (tail + text).slice(-OUTPUT_TAIL_CHARS);
    // CHAOS_LOG_DIR keeps every line of every process, for a failure whose cause scrolled out of the tail.
    if (process.env.CHAOS_LOG_DIR) appendFileSync(path.join(process.env.CHAOS_LOG_DIR, `${options.name}.log`), text);
    const lines = (partialLine + text).split('\n');
    partialLine = lines.pop() ?? '';
    // A live owner that lost its lease (its heartbeat lapsed) says so; a killed one cannot.
    for (const line of lines) {
      if (line.includes('lost the lease')) lostLeases++;
      if (line.includes('"msg":"worker started"')) workerStarted.add(Number(/"pid":(\d+)/.exec(line)?.[1]));
    }
  }

  function spawnOnce(): ChildProcess {
    const spawned = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), entry, options.kind === 'server' ? 'serve' : 'worker'], {
      cwd: packageRoot(),
      env: childEnv({ CLINAGENT_ENV_FILE: '', ...options.env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.stdout!.on('data', onOutput);
    spawned.stderr!.on('data', onOutput);
    return spawned;
  }

  async function isReady(spawned: ChildProcess): Promise<boolean> {
    if (options.kind === 'worker') return workerStarted.has(spawned.pid!);
    try {
      const response = await fetch(`${options.url}/api/health`, { signal: AbortSignal.timeout(1_000) });
      return response.ok;
    } catch {
      return false;
    }
  }

  async function start(): Promise<StartRecord> {
    const spawnedAt = Date.now();
    const deadline = spawnedAt + options.startDeadlineMs;
    for (let attempts = 1; ; attempts++) {
      const spawned = spawnOnce();
      child = spawned;
      expectingExit = false;
      let exited = false;
      spawned.once('exit', (code, signal) => {
        exited = true;
        if (up && child === spawned && !expectingExit) {
          exitsOnTheirOwn.push({ pid: spawned.pid!, code, signal, output: tail.slice(-4_000) });
        }
        if (child === spawned) up = false;
      });
      while (!exited && Date.now() < deadline) {
        if (await isReady(spawned)) {
          up = true;
          const record = { spawnedAt, readyAt: Date.now(), attempts };
          starts.push(record);
          return record;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (!exited) {
        spawned.kill('SIGKILL');
        throw new Error(`${options.name} was not up ${options.startDeadlineMs} ms after it was started (${attempts} attempts); its output ends:\n${tail.slice(-4_000)}`);
      }
      if (Date.now() >= deadline) throw new Error(`${options.name} could not start within ${options.startDeadlineMs} ms (${attempts} attempts, each exited); its output ends:\n${tail.slice(-4_000)}`);
      // An embedded folder still locked by the killed owner: start again, as an operator (or systemd) would.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function signal(sig: NodeJS.Signals): Promise<{ pid: number; at: number }> {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) throw new Error(`${options.name} is not running`);
    expectingExit = true;
    up = false;
    const exited = once(current, 'exit');
    current.kill(sig);
    await exited;
    return { pid: current.pid!, at: Date.now() };
  }

  return {
    name: options.name,
    kind: options.kind,
    start,
    /** SIGKILL, as a crash or the OOM killer would; resolves once the process is gone. */
    kill: () => signal('SIGKILL'),
    /** SIGTERM and wait for the orderly shutdown; a process already gone is left. */
    async stop(): Promise<void> {
      if (child && child.exitCode === null && child.signalCode === null) await signal('SIGTERM');
    },
    isUp: () => up,
    pid: () => child?.pid,
    output: () => tail,
    lostLeases: () => lostLeases,
    exitsOnTheirOwn: () => exitsOnTheirOwn,
    starts: () => starts,
  };
}

export type ChaosProcess = ReturnType<typeof chaosProcess>;
