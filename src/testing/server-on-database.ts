import type { Database } from '../core/db/connect.js';
import { buildServer } from '../http/server.js';
import { buildTestContext } from './test-context.js';

/**
 * A server listening on loopback over a database the test keeps, so the test can stop it and start another over the
 * same data: a restart, as a process ending leaves its data folder or PostgreSQL behind.
 */
export async function startServerOn(database: Database, options: { engine?: 'pglite' | 'postgres'; llmBaseUrl?: string; env?: Record<string, string> }) {
  const ctx = await buildTestContext({ engine: options.engine, database, llmBaseUrl: options.llmBaseUrl, env: options.env });
  const app = await buildServer(ctx, { serveConsole: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    ctx,
    app,
    url,
    /** Stops the server and its context, leaving the database open for the next one. */
    async stop(): Promise<void> {
      await app.close();
      await ctx.jobs?.stop();
      ctx.skills.close();
      await ctx.trace.close();
    },
    /** Stops everything, the database included. */
    async close(): Promise<void> {
      await app.close();
      await ctx.close();
    },
  };
}

export type ServerOnDatabase = Awaited<ReturnType<typeof startServerOn>>;
