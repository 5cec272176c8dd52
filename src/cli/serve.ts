import { startServer } from '../main.js';
import { untilSignal } from './signals.js';

export async function serveCommand(): Promise<number> {
  const server = await startServer();
  await untilSignal();
  await server.close();
  return 0;
}
