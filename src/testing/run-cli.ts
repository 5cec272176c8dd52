import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../core/paths.js';
import { childEnv } from './child-env.js';

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

/**
 * Runs the CLI from source (`src/cli/entry.ts`) as users run it: a child process configured by environment
 * only. A hung command is killed after `timeoutMs`, so its test fails with what it printed. `cwd`: the working
 * folder, whose `.env` the CLI reads; by default the package's, whose `.env` (a developer's own) is not read.
 */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 50_000, cwd?: string): Promise<CliOutcome> {
  const entry = path.join(packageRoot(), 'src', 'cli', 'entry.ts');
  const noEnvFile: Record<string, string> = cwd === undefined ? { CLINAGENT_ENV_FILE: '' } : {};
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), entry, ...args], { cwd: cwd ?? packageRoot(), env: childEnv({ ...noEnvFile, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** For afterAll: no CLI child outlives its test file. */
export function killRunningClis(): void {
  for (const child of running) child.kill('SIGKILL');
}
