import { realpath, rmdir, stat } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { ClinAgentError } from '../errors.js';
import { describeThisProcess, ownerState, readOwnerRecord, removeOwnerRecord, writeOwnerRecord, type OwnerRecord, type OwnerState } from './data-dir-owner.js';

/**
 * PGlite keeps the database in this process's memory and writes the folder back; a second process on the
 * same folder would silently work on its own copy and overwrite the other's changes. So one process owns
 * the folder: a lock directory beside it (`<dataDir>.lock`, proper-lockfile), refreshed while open, removed
 * on close or exit, and an owner record beside that (data-dir-owner.ts).
 *
 * A lock whose recorded owner is a dead process on this host is taken over at once, so a server killed with
 * SIGKILL starts again without waiting. Any other lock (owner on another host, no record, an unreadable one)
 * is taken over only once nobody has refreshed it for `staleMs`, as before.
 */

/**
 * Everything that opens the folder (check the owner, remove a dead owner's lock, take the lock, record the
 * owner) happens while holding `<dataDir>.lock-takeover`, so two processes started together after a crash
 * cannot both judge the old owner dead and both take the folder. The section takes milliseconds; 5 s (above
 * proper-lockfile's 2 s minimum) lets a process that crashed inside it hold the others up only that long.
 */
const TAKEOVER_STALE_MS = 5000;
/** Waiting for the takeover mutex: long enough to outlast a crashed holder's TAKEOVER_STALE_MS. */
const TAKEOVER_RETRIES = { retries: 40, minTimeout: 20, maxTimeout: 250, factor: 1.5 };
/**
 * A section that took this long may have let another process decide the mutex was stale and enter too; then
 * neither can trust what it saw, and this one gives up rather than risk two owners.
 */
const TAKEOVER_SAFE_MS = TAKEOVER_STALE_MS / 2;

export function lockDirPath(dataDir: string): string {
  return `${dataDir}.lock`;
}

export function takeoverMutexPath(dataDir: string): string {
  return `${dataDir}.lock-takeover`;
}

/** Returns the release function; throws DATABASE_IN_USE when another process holds the folder. */
export async function lockDataDir(folder: string, staleMs: number): Promise<() => Promise<void>> {
  // One name for the folder however it is reached (a symlink, a relative path), as proper-lockfile resolves it
  // itself by default; the lock, its owner record and the mutex all sit beside that name.
  const dataDir = await realpath(folder);
  const releaseMutex = await holdTakeoverMutex(dataDir);
  const enteredAt = Date.now();
  let releaseLock: (() => Promise<void>) | undefined;
  let owner: OwnerRecord;
  try {
    releaseLock = await takeLock(dataDir, staleMs);
    owner = await describeThisProcess(await lockId(dataDir));
    await writeOwnerRecord(dataDir, owner);
    if (Date.now() - enteredAt > TAKEOVER_SAFE_MS) {
      throw new ClinAgentError(
        'DATABASE_IN_USE',
        `Opening the embedded database in ${dataDir} took over ${TAKEOVER_SAFE_MS / 1000} s (a busy or suspended machine), so another process may have opened it at the same time; stopped so that two processes never write it. Run this again.`,
        { dataDir },
      );
    }
  } catch (error) {
    // A lock taken but not recorded (or recorded too late to trust) is given back, record first.
    if (releaseLock) {
      await readOwnerRecord(dataDir).then((record) => (typeof record === 'string' || record.pid !== process.pid ? undefined : removeOwnerRecord(dataDir, record))).catch(() => undefined);
      await releaseLock().catch(() => undefined);
    }
    throw error;
  } finally {
    await releaseMutex();
  }
  const giveBack = releaseLock;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    try {
      // Record first: while the lock is held nobody else writes a record, so this never removes another owner's.
      await removeOwnerRecord(dataDir, owner);
    } finally {
      // Already gone (compromised, or removed by hand): nothing left to release.
      await giveBack().catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ERELEASED' && error.code !== 'ENOENT') throw error;
      });
    }
  };
}

async function holdTakeoverMutex(dataDir: string): Promise<() => Promise<void>> {
  const mutex = takeoverMutexPath(dataDir);
  let release: () => Promise<void>;
  try {
    // Its own `file` key: proper-lockfile books locks by file, and the data folder's key is the lock itself.
    release = await lockfile.lock(mutex, { lockfilePath: mutex, realpath: false, stale: TAKEOVER_STALE_MS, retries: TAKEOVER_RETRIES, onCompromised: () => undefined });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw new ClinAgentError(
      'DATABASE_IN_USE',
      `Another process has been opening the embedded database in ${dataDir} for several seconds (${mutex} is held). Run this again in a moment; if it keeps failing and no ClinAgent process runs, remove that directory.`,
      { dataDir },
      { cause: error },
    );
  }
  return () => release().catch(() => undefined);
}

/** Called with the takeover mutex held. */
async function takeLock(dataDir: string, staleMs: number): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(dataDir, lockOptions(dataDir, staleMs));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
  }
  const owner = await judgeOwner(dataDir);
  if (owner.state !== 'dead') throw inUse(dataDir, staleMs, owner);
  await rmdir(lockDirPath(dataDir)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  try {
    return await lockfile.lock(dataDir, lockOptions(dataDir, staleMs));
  } catch (error) {
    // Only a process that skips the mutex (an older ClinAgent) can have taken it in between.
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw inUse(dataDir, staleMs, { state: 'unknown', why: 'a process that took it while the lock of a dead one was removed' }, error);
  }
}

function lockOptions(dataDir: string, staleMs: number): lockfile.LockOptions {
  return {
    realpath: false,
    stale: staleMs,
    update: Math.max(1000, Math.floor(staleMs / 4)),
    // Thrown from a timer, so the process stops: another process has taken the folder over, and two
    // writers would corrupt each other's data.
    onCompromised: (error) => {
      throw new ClinAgentError('DATABASE_IN_USE', `Lost the lock on the embedded database in ${dataDir} (${error.message}); another process may have opened it. Stopping so that two processes never write it. Restart ClinAgent.`, { dataDir }, { cause: error });
    },
  };
}

async function judgeOwner(dataDir: string): Promise<OwnerState> {
  const record = await readOwnerRecord(dataDir);
  if (record === 'missing') return { state: 'unknown', why: 'a process that left no owner record (an older ClinAgent)' };
  if (record === 'unreadable') return { state: 'unknown', why: `a process whose owner record ${dataDir}.lock-owner.json cannot be read` };
  const current = await lockId(dataDir).catch(() => undefined);
  // A record from an earlier lock (left by a process that exited without removing it) says nothing about this one.
  if (current !== record.lockId) return { state: 'unknown', why: 'a process that left no owner record of this lock' };
  return ownerState(record);
}

/** Inode and birth time of the lock directory: a new lock directory differs even when the file system reuses the inode. */
async function lockId(dataDir: string): Promise<string> {
  const stats = await stat(lockDirPath(dataDir), { bigint: true });
  return `${stats.ino}:${stats.birthtimeNs}`;
}

function inUse(dataDir: string, staleMs: number, owner: OwnerState, cause?: unknown): ClinAgentError {
  const afterDeath =
    owner.state === 'alive'
      ? 'If it stops or dies, the folder opens again at once.'
      : `ClinAgent cannot tell from here whether it still runs, so its lock is taken over once nobody has refreshed it for ${Math.ceil(staleMs / 1000)} seconds.`;
  return new ClinAgentError(
    'DATABASE_IN_USE',
    `The embedded database in ${dataDir} is in use by another ClinAgent process (${owner.why}; usually a running \`clinagent serve\`); it belongs to one process at a time. Stop the server first and run this again, or set DATABASE_URL to a PostgreSQL server, which several processes can share. ${afterDeath}`,
    { dataDir },
    cause === undefined ? undefined : { cause },
  );
}
