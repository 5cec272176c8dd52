import { startServer } from '../main.js';
import { untilSignal } from './signals.js';
import { surviveDatabaseRestarts } from './survive-database-restart.js';

export async function serveCommand(): Promise<number> {
  const server = await startServer();
  surviveDatabaseRestarts(server.ctx.logger);
  await untilSignal();
  await server.close();
  return 0;
}
