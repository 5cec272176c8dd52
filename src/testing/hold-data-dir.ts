import { openDatabase } from '../core/db/connect.js';
import { untilSignal } from '../cli/signals.js';

/**
 * A process that owns an embedded database folder, for tests of what a second process sees: it opens
 * DATA_DIR, prints `holding <pid>` once the folder is locked and open, and closes it on SIGTERM (a test may
 * SIGKILL it instead, as a crash would). Run as `node --import tsx src/testing/hold-data-dir.ts`.
 */
const dataDir = process.env.DATA_DIR;
if (!dataDir) {
  process.stderr.write('hold-data-dir needs DATA_DIR.\n');
  process.exit(1);
}
const database = await openDatabase({ dataDir });
await database.db.execute('select 1');
process.stdout.write(`holding ${process.pid}\n`);
// Signal listeners and the lock's refresh timer do not keep a process alive; this does, until the signal.
const keepAlive = setInterval(() => undefined, 60_000);
await untilSignal();
clearInterval(keepAlive);
await database.close();
