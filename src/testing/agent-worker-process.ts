import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { buildServer } from '../http/server.js';
import { registerWorkers } from '../workers.js';
import { untilSignal } from '../cli/signals.js';

/**
 * A `clinagent serve` for tests that kill it: the same createContext, registerWorkers and API, configured by
 * environment only (DATABASE_URL or DATA_DIR, SCENARIOS_DIR, LLM_*, QC_LEASE_MS, QC_SWEEP_INTERVAL_MS,
 * QC_STALE_MS, CLINAGENT_ADMIN_TOKEN). It serves the API on a free loopback port, because an embedded database
 * belongs to this process alone: a test reaches the runs through the API as a user would. Prints
 * `ready <pid> <port>` once its workers poll and the API listens. Run as
 * `node --import tsx src/testing/agent-worker-process.ts`.
 */
const config = loadConfig();
const ctx = await createContext(config, { startJobs: true });
// As `clinagent serve` does: CLINAGENT_ADMIN_TOKEN signs the test in as admin.
await ctx.users.bootstrapAdmin(config.adminToken);
const workers = await registerWorkers(ctx);
const app = await buildServer(ctx, { serveConsole: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`ready ${process.pid} ${typeof address === 'object' && address ? address.port : 0}\n`);
await untilSignal();
await app.close();
workers.stop();
await closeContext(ctx);
