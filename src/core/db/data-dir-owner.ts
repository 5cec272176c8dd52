import { readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { z } from 'zod';

/**
 * Who holds an embedded data folder's lock, recorded beside the lock directory (`<dataDir>.lock-owner.json`)
 * rather than inside it: proper-lockfile treats any change of the lock directory's mtime as a sign that
 * someone else took the lock, and a file written inside it changes that mtime.
 *
 * The record lets the next process tell a dead owner on this host (taken over at once) from a live one or
 * one it cannot judge (on another host, an older ClinAgent that wrote no record), which keep the staleness rule.
 */
const ownerRecordSchema = z.object({
  pid: z.number().int().positive(),
  hostname: z.string(),
  /** Linux /proc/sys/kernel/random/boot_id: a host of the same name on the network, or this host after a reboot, is another machine as far as process ids go. */
  bootId: z.string().optional(),
  /** Linux /proc/self/ns/pid: a container with its own process ids may share the folder and the host name; its pids mean nothing here. */
  pidNamespace: z.string().optional(),
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells the owner from a later process that got its pid. */
  startTime: z.string().optional(),
  /** Inode and birth time of the lock directory this record describes, so a record left from an earlier lock never vouches for a newer one. */
  lockId: z.string(),
  since: z.string(),
});

export type OwnerRecord = z.infer<typeof ownerRecordSchema>;

export type OwnerState =
  | { state: 'dead'; why: string }
  | { state: 'alive'; why: string }
  | { state: 'unknown'; why: string };

interface HostIdentity {
  hostname: string;
  bootId?: string;
  pidNamespace?: string;
}

export function ownerRecordPath(dataDir: string): string {
  return `${dataDir}.lock-owner.json`;
}

let hostIdentity: Promise<HostIdentity> | undefined;

/** Read once per process: none of these change while it runs. Absent fields (no /proc: macOS, Windows) compare equal to absent. */
function thisHost(): Promise<HostIdentity> {
  hostIdentity ??= (async () => ({
    hostname: hostname(),
    bootId: await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((text) => text.trim(), () => undefined),
    pidNamespace: await readlink('/proc/self/ns/pid').catch(() => undefined),
  }))();
  return hostIdentity;
}

interface ProcStat {
  state: string;
  startTime: string;
}

/**
 * /proc/<pid>/stat: field 2 (the command) is in parentheses and may hold spaces or parentheses itself, so the
 * fields are counted from after its last ')': field 3 (state) first, field 22 (start time) twentieth.
 * Undefined when the process is gone or there is no /proc.
 */
async function readProcStat(pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 1).trim().split(/\s+/);
  const [state, startTime] = [fields[0], fields[19]];
  return state && startTime ? { state, startTime } : undefined;
}

/** This process as the owner of the lock directory identified by `lockId`. */
export async function describeThisProcess(lockId: string): Promise<OwnerRecord> {
  const host = await thisHost();
  const proc = await readProcStat(process.pid);
  return { pid: process.pid, ...host, startTime: proc?.startTime, lockId, since: new Date().toISOString() };
}

/** The record, 'missing' when there is none, or 'unreadable' (half-written by hand, another format): never trusted. */
export async function readOwnerRecord(dataDir: string): Promise<OwnerRecord | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(ownerRecordPath(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return 'unreadable';
  }
  try {
    const parsed = ownerRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Written to a temporary file and renamed over the old record, so a reader sees the old record or the new one, never half of one. */
export async function writeOwnerRecord(dataDir: string, record: OwnerRecord): Promise<void> {
  const temporary = `${ownerRecordPath(dataDir)}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, 'utf8');
  await rename(temporary, ownerRecordPath(dataDir));
}

/** Removes the record only while it still names this process and lock: never another owner's. */
export async function removeOwnerRecord(dataDir: string, record: OwnerRecord): Promise<void> {
  const current = await readOwnerRecord(dataDir);
  if (typeof current === 'string' || current.pid !== record.pid || current.lockId !== record.lockId) return;
  await rm(ownerRecordPath(dataDir), { force: true });
}

/**
 * Whether the recorded owner still runs. Only a process on this host (same name, same boot, same process-id
 * namespace) can be judged; its pid is probed with signal 0 and, where /proc exists, its start time compared
 * so that an unrelated process that got the pid after a crash does not keep the folder locked.
 */
export async function ownerState(record: OwnerRecord): Promise<OwnerState> {
  const host = await thisHost();
  if (record.hostname !== host.hostname || record.bootId !== host.bootId || record.pidNamespace !== host.pidNamespace) {
    const where = record.hostname === host.hostname ? `host ${record.hostname} before a reboot, or in another container` : `host ${record.hostname}`;
    return { state: 'unknown', why: `process ${record.pid} on ${where}, which this process cannot check` };
  }
  let anotherUser = false;
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return { state: 'dead', why: `process ${record.pid} no longer runs` };
    if (code !== 'EPERM') return { state: 'unknown', why: `process ${record.pid} could not be checked (${code ?? String(error)})` };
    anotherUser = true;
  }
  const proc = await readProcStat(record.pid);
  // Gone from /proc after answering the signal: it exited in between. Not so for another user's process, which
  // /proc may hide (mounted with hidepid): that one runs.
  if (proc === undefined && host.bootId !== undefined && !anotherUser) return { state: 'dead', why: `process ${record.pid} no longer runs` };
  // A killed process its parent has not reaped yet still answers signal 0, but will never touch the folder again.
  if (proc && (proc.state === 'Z' || proc.state === 'X')) return { state: 'dead', why: `process ${record.pid} has exited` };
  if (proc && record.startTime !== undefined && proc.startTime !== record.startTime) {
    return { state: 'dead', why: `process ${record.pid} exited and its id now belongs to another process` };
  }
  return { state: 'alive', why: `process ${record.pid} on this host` };
}
