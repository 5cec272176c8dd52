import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { registerWorkers } from '../workers.js';
import { untilSignal } from '../cli/signals.js';

/**
 * A `clinagent worker` process for tests that kill it: the same createContext and registerWorkers, configured
 * by environment only (DATABASE_URL, SKILLS_DIR, LLM_*, QC_LEASE_MS, QC_SWEEP_INTERVAL_MS, QC_STALE_MS). It
 * prints `ready <pid>` on stdout once its workers poll, so the test starts the clock on a live worker, not
 * on tsx compiling. Run as `node --import tsx src/testing/qc-worker-process.ts`.
 */
const config = loadConfig();
if (!config.databaseUrl) {
  process.stderr.write('qc-worker-process needs DATABASE_URL: a worker that tests may kill must not own an embedded database.\n');
  process.exit(1);
}
const ctx = await createContext(config, { startJobs: true });
const workers = await registerWorkers(ctx);
process.stdout.write(`ready ${process.pid}\n`);
await untilSignal();
workers.stop();
await closeContext(ctx);
