import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.js';

/**
 * What a serve or worker process does with a rejection nobody handled (pg-boss 10 settles jobs without awaiting):
 * one that says the database is unavailable is logged and the process lives on; any other still ends it with 1.
 */
function runWith(reason: string): { status: number | null; output: string } {
  const script = `
    import { surviveDatabaseRestarts } from './src/cli/survive-database-restart.ts';
    import { createLogger } from './src/core/logger.ts';
    surviveDatabaseRestarts(createLogger('warn'));
    void Promise.reject(${reason});
    setTimeout(() => { process.stdout.write('still running\\n'); process.exit(0); }, 300);
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: packageRoot(), encoding: 'utf8', timeout: 30_000 });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

describe('a process that outlives a PostgreSQL restart', () => {
  it('logs a rejection that says the database is unavailable and goes on', () => {
    const { status, output } = runWith(`Object.assign(new Error('the database system is shutting down'), { code: '57P03' })`);
    expect(output).toContain('still running');
    expect(output).toContain('while the database was unavailable');
    expect(status).toBe(0);
  });

  it('still ends on any other unhandled rejection', () => {
    const { status, output } = runWith(`new Error('a bug')`);
    expect(output).not.toContain('still running');
    expect(output).toContain('unhandled rejection; stopping');
    expect(status).toBe(1);
  });
});
