import { and, asc, eq, inArray, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';

/**
 * The review queue holds what a person still has to decide, once (as an EDC's discrepancy workflow does):
 *
 * - a run reaches its human_review node after findings, but every one of them is already at the site or was
 *   decided on the same values (findings.ts isDecidedOnSameValues): nothing to review, the run does not wait;
 * - a record has at most one open review item per skill: a run that suspends takes over the queries an older
 *   suspended run of the same skill and record holds back, and that older run is cancelled as superseded.
 */

type RunKey = { id: string; projectId: string; recordId: string; skillId: string };

/** Whether a review of `run` would be about anything: a live query it, or an older waiting run of its skill, holds back. */
export async function hasHeldFindings(db: Db, run: RunKey): Promise<boolean> {
  const holders = db
    .select({ id: taskRuns.id })
    .from(taskRuns)
    .where(and(eq(taskRuns.projectId, run.projectId), eq(taskRuns.recordId, run.recordId), eq(taskRuns.skillId, run.skillId), or(eq(taskRuns.id, run.id), eq(taskRuns.status, 'SUSPENDED'))));
  const [held] = await db
    .select({ id: pendingActions.id })
    .from(pendingActions)
    .where(and(eq(pendingActions.projectId, run.projectId), eq(pendingActions.recordId, run.recordId), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]), inArray(pendingActions.heldByTaskRunId, holders)))
    .limit(1);
  return held !== undefined;
}

/**
 * For runs that have just suspended: the older suspended runs of the same skill and record hand over the queries
 * they hold back and are returned, to be cancelled as superseded (last in the transaction: a cancel writes its
 * audit entry at once). Their rows are locked before the query rows, in the order a review decision takes them.
 */
export async function takeOverOlderReviews(tx: Db, suspending: readonly RunKey[]): Promise<{ audit: AuditEntryInput[]; superseded: Array<{ id: string; by: string }> }> {
  const audit: AuditEntryInput[] = [];
  const superseded: Array<{ id: string; by: string }> = [];
  for (const run of [...suspending].sort((a, b) => a.recordId.localeCompare(b.recordId))) {
    const older = await tx
      .select({ id: taskRuns.id })
      .from(taskRuns)
      .where(and(eq(taskRuns.projectId, run.projectId), eq(taskRuns.recordId, run.recordId), eq(taskRuns.skillId, run.skillId), eq(taskRuns.status, 'SUSPENDED'), ne(taskRuns.id, run.id)))
      .orderBy(asc(taskRuns.id))
      .for('update');
    if (!older.length) continue;
    const ids = older.map((r) => r.id);
    const moved = await tx
      .update(pendingActions)
      .set({ heldByTaskRunId: run.id, updatedAt: sql`now()` })
      .where(and(inArray(pendingActions.heldByTaskRunId, ids), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES])))
      .returning({ id: pendingActions.id });
    for (const query of moved) {
      audit.push({ projectId: run.projectId, entityType: 'query', entityId: query.id, action: 'held_by_newer_run', actor: `sop:${run.skillId}`, newValue: { heldByTaskRunId: run.id }, reason: `the review of task run ${run.id} replaces the older review of record ${run.recordId}` });
    }
    for (const id of ids) superseded.push({ id, by: run.id });
  }
  return { audit, superseded };
}
