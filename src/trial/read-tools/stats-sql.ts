import { and, eq, inArray, max, or, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { pendingActions, trialRecords } from '../../core/db/schema/trial.js';
import { shownStatusSql, type QueryStatus } from '../queries.js';
import { naturalRecordOrder } from '../store/record-order.js';

/** Audit actions an import or a REDCap sync writes when it changes something (trial/store). */
const IMPORT_ACTIONS = ['record.create', 'record.update', 'dictionary.replace', 'events.replace', 'arms.replace'] as const;

/**
 * When an import or sync last changed the project's data, from the audit trail: record rows keep only their
 * own last change, and a dictionary-only import touches no row. An import that changed nothing leaves no
 * trace, so this is "last change imported", which is what a PI asking "how fresh is the data" means.
 */
export async function selectLastImportAt(db: Db, projectId: string): Promise<Date | null> {
  const [row] = await db
    .select({ at: max(auditLog.at) })
    .from(auditLog)
    .where(and(eq(auditLog.projectId, projectId), or(eq(auditLog.entityType, 'record'), eq(auditLog.entityType, 'project')), inArray(auditLog.action, [...IMPORT_ACTIONS])));
  return row?.at ?? null;
}

export async function countQueriesByStatus(db: Db, projectId: string): Promise<Record<QueryStatus, number>> {
  const rows = await db
    .select({ status: shownStatusSql, n: sql<number>`count(*)::int` })
    .from(pendingActions)
    .where(eq(pendingActions.projectId, projectId))
    .groupBy(shownStatusSql);
  const counts: Record<QueryStatus, number> = { held: 0, open: 0, answered: 0, reopened: 0, closed: 0, cancelled: 0 };
  for (const row of rows) if (row.status in counts) counts[row.status] = Number(row.n);
  return counts;
}

/** The first `limit` record ids in the order the record list uses (natural: "S9" before "S10"). */
export async function selectRecordIds(db: Db, projectId: string, limit: number): Promise<string[]> {
  const rows = await db
    .select({ recordId: trialRecords.recordId })
    .from(trialRecords)
    .where(eq(trialRecords.projectId, projectId))
    .groupBy(trialRecords.recordId)
    .orderBy(...naturalRecordOrder(trialRecords.recordId))
    .limit(limit);
  return rows.map((row) => row.recordId);
}
