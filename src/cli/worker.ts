import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError } from '../core/errors.js';
import { registerWorkers } from '../workers.js';
import { untilSignal } from './signals.js';
import { surviveDatabaseRestarts } from './survive-database-restart.js';

export async function workerCommand(): Promise<number> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    // A PGlite data folder belongs to one process; a second one opening it would corrupt it.
    throw new ClinAgentError('CONFIG_MISSING', 'clinagent worker needs DATABASE_URL (a PostgreSQL server shared by all processes). With the embedded database, `clinagent serve` already runs the workers.', { field: 'DATABASE_URL' });
  }
  const ctx = await createContext(config, { startJobs: true });
  surviveDatabaseRestarts(ctx.logger);
  const workers = await registerWorkers(ctx);
  ctx.logger.info({ pid: process.pid }, 'worker started');
  await untilSignal();
  workers.stop();
  await closeContext(ctx);
  return 0;
}
