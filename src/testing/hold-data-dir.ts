import { createInterface } from 'node:readline';
import { openDatabase, type Database } from '../core/db/connect.js';
import { lockDataDir } from '../core/db/data-dir-lock.js';
import { ClinAgentError } from '../core/errors.js';
import { untilSignal } from '../cli/signals.js';

/**
 * A process that owns an embedded database folder, for tests of what a second process sees: it opens
 * DATA_DIR, prints `holding <pid>` once the folder is locked and open, and closes it on SIGTERM (a test may
 * SIGKILL it instead, as a crash would). Run as `node --import tsx src/testing/hold-data-dir.ts`.
 *
 * HOLD=lock takes only the folder's lock, without starting PGlite (lock tests start many of these).
 * WAIT_FOR_GO=1 waits for a line on stdin before opening, so a test can start several at the same moment.
 * WRITE=1 then commits one row after another into table `crash_rows`, printing `committed <n>` after each
 * commit returns, until killed: what a crash in the middle of writes leaves behind.
 * A refusal prints `refused <code>: <message>` and exits with 3.
 */
const dataDir = process.env.DATA_DIR;
if (!dataDir) {
  process.stderr.write('hold-data-dir needs DATA_DIR.\n');
  process.exit(1);
}
if (process.env.WAIT_FOR_GO === '1') {
  process.stdout.write('ready\n');
  const lines = createInterface({ input: process.stdin });
  await new Promise((resolve) => lines.once('line', resolve));
  lines.close();
}

let close: () => Promise<void>;
let database: Database | undefined;
try {
  if (process.env.HOLD === 'lock') {
    close = await lockDataDir(dataDir, 20_000);
  } else {
    database = await openDatabase({ dataDir });
    await database.db.execute('select 1');
    close = database.close;
  }
} catch (error) {
  if (!ClinAgentError.isInstance(error)) throw error;
  process.stdout.write(`refused ${error.code}: ${error.message}\n`);
  process.exit(3);
}
process.stdout.write(`holding ${process.pid}\n`);
// Signal listeners and the lock's refresh timer do not keep a process alive; this does, until the signal.
const keepAlive = setInterval(() => undefined, 60_000);
if (database && process.env.WRITE === '1') void writeUntilKilled(database);
await untilSignal();
clearInterval(keepAlive);
await close();

async function writeUntilKilled(open: Database): Promise<void> {
  const { pglite } = open;
  if (!pglite) throw new Error('WRITE=1 needs the embedded database');
  await pglite.exec('create table if not exists crash_rows (n integer primary key, body text not null)');
  const start = Number((await pglite.query<{ next: number }>('select coalesce(max(n), 0) + 1 as next from crash_rows')).rows[0]!.next);
  // Rows of a few kB, so a kill lands in the middle of WAL and table writes rather than between tiny ones.
  const body = 'x'.repeat(4000);
  for (let n = start; ; n++) {
    await pglite.query('insert into crash_rows (n, body) values ($1, $2)', [n, body]);
    process.stdout.write(`committed ${n}\n`);
  }
}
