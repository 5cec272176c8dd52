import { and, inArray, isNull, lt, or, type SQL } from 'drizzle-orm';
import { appendAuditEntries, type AuditEntryInput } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import type { RunRow, RunShape } from '../run-shape.js';
import { withTransaction } from '../../../core/db/transaction.js';

export interface Orphan {
  id: string;
  /** Its worker died mid-run (an expired lease), as opposed to a run whose job was lost. */
  abandoned: boolean;
  /**
   * The state the sweep found it in (its last update): two sweeps that see the same stranding queue one job, while a
   * run stranded again later (taken over, then its new worker died too) is a new stranding with a job of its own.
   */
  strandedAt: string;
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
    .select({ id: t.id, status: t.status, leaseUntil: t.leaseUntil, updatedAt: t.updatedAt })
    .from(t)
    .where(and(inArray(t.status, ['PENDING', 'RUNNING']), or(isNull(t.leaseUntil), lt(t.leaseUntil, now)), lt(t.updatedAt, staleBefore), options.scope))
    .limit(options.limit ?? 500);
  const abandoned = candidates.filter((c) => c.status === 'RUNNING' && c.leaseUntil !== null);
  const waiting = candidates.filter((c) => !abandoned.includes(c));
  const queued = waiting.length ? await options.isQueued(waiting.map((w) => w.id)) : new Set<string>();
  const stamp = (c: (typeof candidates)[number]) => new Date(c.updatedAt).toISOString();
  return [...abandoned.map((c) => ({ id: c.id, abandoned: true, strandedAt: stamp(c) })), ...waiting.filter((w) => !queued.has(w.id)).map((w) => ({ id: w.id, abandoned: false, strandedAt: stamp(w) }))];
}

/** Notes that runs are being picked up after their worker stopped; the next saved step clears it. */
export async function markRecovered(db: Db, t: RunShape, ids: string[], auditOf: (run: RunRow) => AuditEntryInput[]): Promise<void> {
  if (!ids.length) return;
  await withTransaction(db, async (tx) => {
    const rows = await tx.update(t).set({ recoveredAt: new Date() }).where(and(inArray(t.id, ids), isNull(t.recoveredAt))).returning();
    await appendAuditEntries(tx, rows.flatMap(auditOf));
  });
}
