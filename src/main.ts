import type { FastifyInstance } from 'fastify';
import { closeContext, createContext, type AppContext } from './context.js';
import { loadConfig } from './core/config.js';
import { createLogger } from './core/logger.js';
import { buildServer } from './http/server.js';
import { enqueueScenarioDocuments, enqueueUnfinishedScopeIndexes, registerWorkers } from './workers.js';
import { ensureDemoTrial } from './trial/demo/load-demo-trial.js';
import { ensureDemoProtocol } from './trial/demo/load-demo-protocol.js';
import { createTrialStore } from './trial/store/trial-store.js';

export interface StartServerOptions {
  env?: NodeJS.ProcessEnv;
  logLevel?: string;
  serveConsole?: boolean;
  /** Where the first-start sign-in link is printed; stdout by default. */
  print?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  ctx: AppContext;
  /** The admin token from CLINAGENT_ADMIN_TOKEN, when it was given. */
  adminToken?: string;
  /** The one-time sign-in link printed at first start, when one was issued. */
  loginUrl?: string;
  close(): Promise<void>;
}

/**
 * start-up: loadConfig -> createContext (migrations, pg-boss) -> workers -> HTTP server -> first-start
 * admin. One process on the embedded database does everything.
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const config = loadConfig(options.env ?? process.env);
  const logger = createLogger(options.logLevel ?? config.logLevel);
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const ctx = await createContext(config, { logger, startJobs: true });
  let app: FastifyInstance | undefined;
  try {
    const workers = await registerWorkers(ctx);
    app = await buildServer(ctx, { serveConsole: options.serveConsole });
    const bootstrap = await ctx.users.bootstrapAdmin(config.adminToken);
    // First start only: a newcomer sees QC working on a synthetic trial at once.
    const demo = await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    if (demo) logger.info({ projectId: demo.projectId, records: demo.records }, 'loaded the demo trial');
    if (demo && ctx.hasVectorStore) {
      // The assistant's search_protocol answers from the first start; a failing embedder only costs that.
      await ensureDemoProtocol(ctx.rag).catch((error: unknown) => logger.warn({ err: error }, 'could not add the demo protocol to the demo project; add it with POST /api/iit/projects/demo-htn-01/protocol-documents'));
    }
    const address = await app.listen({ host: config.host, port: config.port });
    const url = address.replace('[::1]', 'localhost');
    const loginUrl = bootstrap.loginCode ? `${url}/?login=${bootstrap.loginCode}` : undefined;
    print(`ClinAgent ${ctx.database.engine === 'pglite' ? `(embedded database in ${config.dataDir})` : '(PostgreSQL)'} is running at ${url}`);
    if (loginUrl) print(`Sign in as admin with this one-time link (valid 24 hours):\n    ${loginUrl}`);
    if (!ctx.llm.isConfigured) print('No LLM is configured yet: set LLM_BASE_URL and LLM_MODEL (see .env.example); agent runs fail until then.');
    await enqueueScenarioDocuments(ctx);
    await enqueueUnfinishedScopeIndexes(ctx);
    const server = app;
    return {
      url,
      app: server,
      ctx,
      adminToken: config.adminToken,
      loginUrl,
      async close() {
        workers.stop();
        await server.close();
        await closeContext(ctx);
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await closeContext(ctx).catch(() => undefined);
    throw error;
  }
}
