import { and, eq, gte, inArray, isNull, lt, not, or, sql, type SQL } from 'drizzle-orm';
import { appendAuditEntries, type AuditEntryInput } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import type { RunRow, RunShape } from '../run-shape.js';
import { withTransaction } from '../../../core/db/transaction.js';

export interface Orphan {
  id: string;
  /** Its worker died mid-run (an expired lease), as opposed to a run whose job was lost. */
  abandoned: boolean;
}

/**
 * Runs nobody is advancing, untouched for `staleMs`:
 * - RUNNING with an expired lease: its worker died mid-run (its job may still look active, and would only
 *   expire much later), so it is always picked up;
 * - PENDING or lease-less RUNNING with no job waiting for it (`isQueued`): the job was lost, or a dead worker
 *   had fetched it (workers fetch jobs in batches, so a killed one leaves fetched jobs whose runs never
 *   started). A run whose job is merely waiting is not orphaned: another job would only be a duplicate. A live
 *   worker's fetched-but-not-started job may get a duplicate; the run's lease makes that harmless.
 */
export async function findOrphans(
  db: Db,
  t: RunShape,
  options: { staleMs: number; isQueued(ids: string[]): Promise<Set<string>>; now?: Date; limit?: number; scope?: SQL },
): Promise<Orphan[]> {
  const now = options.now ?? new Date();
  const staleBefore = new Date(now.getTime() - options.staleMs);
  const candidates = await db
    .select({ id: t.id, status: t.status, leaseUntil: t.leaseUntil })
    .from(t)
    .where(and(inArray(t.status, ['PENDING', 'RUNNING']), or(isNull(t.leaseUntil), lt(t.leaseUntil, now)), lt(t.updatedAt, staleBefore), options.scope))
    .limit(options.limit ?? 500);
  const abandoned = candidates.filter((c) => c.status === 'RUNNING' && c.leaseUntil !== null);
  const waiting = candidates.filter((c) => !abandoned.includes(c));
  const queued = waiting.length ? await options.isQueued(waiting.map((w) => w.id)) : new Set<string>();
  return [...abandoned.map(({ id }) => ({ id, abandoned: true })), ...waiting.filter((w) => !queued.has(w.id)).map(({ id }) => ({ id, abandoned: false }))];
}

/**
 * Claims orphans for one sweep: one conditional UPDATE stamps those still stale and unleased, so of two sweeps that
 * found the same run at once only one gets it back (the other's condition fails on the stamped row) and queues its
 * job. The stamp also starts the staleness clock again: if that job is lost too (fetched by a process killed before
 * it ran it), the run is an orphan again after staleMs and the next sweep queues another, rather than waiting for a
 * job that never runs.
 */
export async function claimOrphans(db: Db, t: RunShape, ids: string[], options: { staleMs: number; now?: Date; scope?: SQL }): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const now = options.now ?? new Date();
  const rows = await db
    .update(t)
    .set({ updatedAt: now })
    .where(and(inArray(t.id, ids), inArray(t.status, ['PENDING', 'RUNNING']), or(isNull(t.leaseUntil), lt(t.leaseUntil, now)), lt(t.updatedAt, new Date(now.getTime() - options.staleMs)), options.scope))
    .returning({ id: t.id });
  return new Set(rows.map((r) => r.id));
}

/**
 * On a database only this process can open, a lease held by anyone else belongs to a process that died (the embedded
 * folder's lock was taken over from it): ended now rather than after up to a lease's length, so the sweep that
 * follows takes its runs over (once their last update is QC_STALE_MS old, as for any stranded run).
 */
export async function endLeasesOfOthers(db: Db, t: RunShape, ownPrefix: string, scope?: SQL): Promise<string[]> {
  const now = new Date();
  const rows = await db
    .update(t)
    .set({ leaseUntil: new Date(now.getTime() - 1) })
    .where(and(eq(t.status, 'RUNNING'), gte(t.leaseUntil, now), not(sql`starts_with(${t.leaseOwner}, ${ownPrefix})`), scope))
    .returning({ id: t.id });
  return rows.map((r) => r.id);
}

/** Notes that runs are being picked up after their worker stopped; the next saved step clears it. */
export async function markRecovered(db: Db, t: RunShape, ids: string[], auditOf: (run: RunRow) => AuditEntryInput[]): Promise<void> {
  if (!ids.length) return;
  await withTransaction(db, async (tx) => {
    const rows = await tx.update(t).set({ recoveredAt: new Date() }).where(and(inArray(t.id, ids), isNull(t.recoveredAt))).returning();
    await appendAuditEntries(tx, rows.flatMap(auditOf));
  });
}
