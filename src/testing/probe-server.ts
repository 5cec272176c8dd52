import { buildServer } from '../http/server.js';
import { buildTestContext } from './test-context.js';

/**
 * The server the request-edge tests probe with bad input: a fresh test database on `engine`, an admin bearing
 * `adminToken`, and an empty project "probe" so project-scoped routes get past the membership check.
 */
export async function startProbeServer(engine: 'pglite' | 'postgres', adminToken: string) {
  const ctx = await buildTestContext({ engine });
  const app = await buildServer(ctx, { serveConsole: false });
  await app.ready();
  await ctx.users.bootstrapAdmin(adminToken);
  await ctx.users.createProject({ id: 'probe', name: 'Probe project' });
  return {
    ctx,
    app,
    async close() {
      await app.close();
      await ctx.close();
    },
  };
}

export type ProbeServer = Awaited<ReturnType<typeof startProbeServer>>;
