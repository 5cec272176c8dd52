import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildServer } from '../http/server.js';
import { registerWorkers } from '../workers.js';
import { buildTestContext } from './test-context.js';

interface QcServerOptions {
  engine: 'pglite' | 'postgres';
  /** Names the temp skills folder, so a left-over folder says which test made it. */
  name: string;
  /** File name (without .yaml) to the skill's YAML, written before the server reads the folder. */
  skills: Record<string, string>;
  /** Extra configuration, e.g. a short QC sweep interval for crash tests. */
  env?: Record<string, string>;
  /** Without the QC workers (and pg-boss): for tests of routes that never start a run. */
  withoutWorkers?: boolean;
}

export interface QcServer {
  ctx: Awaited<ReturnType<typeof buildTestContext>>;
  app: Awaited<ReturnType<typeof buildServer>>;
  skillsDir: string;
  /** Stops the workers, the server and the database, and removes the skills folder. */
  close(): Promise<void>;
}

/**
 * The HTTP API over a test database with a folder of QC skills and, unless told otherwise, the QC workers running:
 * what a test of a QC route needs before it creates its users and trials.
 */
export async function startQcServer(options: QcServerOptions): Promise<QcServer> {
  const skillsDir = mkdtempSync(path.join(tmpdir(), `clinagent-${options.name}-`));
  for (const [file, yaml] of Object.entries(options.skills)) writeFileSync(path.join(skillsDir, `${file}.yaml`), yaml);
  let ctx: QcServer['ctx'];
  try {
    ctx = await buildTestContext({ engine: options.engine, startJobs: !options.withoutWorkers, env: { SKILLS_DIR: skillsDir, ...options.env } });
  } catch (error) {
    rmSync(skillsDir, { recursive: true, force: true });
    throw error;
  }
  const app = await buildServer(ctx, { serveConsole: false });
  const workers = options.withoutWorkers ? null : await registerWorkers(ctx);
  return {
    ctx,
    app,
    skillsDir,
    async close() {
      workers?.stop();
      await app.close();
      await ctx.close();
      rmSync(skillsDir, { recursive: true, force: true });
    },
  };
}
