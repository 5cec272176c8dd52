import { and, asc, countDistinct, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { naturalRecordOrder } from './record-order.js';
import type { Db } from '../../core/db/connect.js';
import { trialEvents, trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import type { StoredRecord } from './types.js';

export interface RecordFilter {
  site?: string;
  recordIds?: ReadonlyArray<string>;
}

export interface RecordPage extends RecordFilter {
  /** Rows, i.e. (record, event) pairs, not subjects. */
  limit?: number;
  offset?: number;
}

/**
 * Rows ordered by record id, then by the event's place in the visit schedule. Record ids sort naturally
 * ("S9" before "S10", REDCap's auto-numbered "2" before "10") and in byte order (COLLATE "C"), so PGlite
 * and a PostgreSQL server with another locale page through the same rows in the same order.
 */
export async function listRecords(db: Db, projectId: string, page: RecordPage = {}): Promise<StoredRecord[]> {
  assertPaging(page);
  if (page.recordIds?.length === 0) return [];
  let query = db
    .select({
      recordId: trialRecords.recordId,
      eventName: trialRecords.eventName,
      site: trialRecords.site,
      data: trialRecords.data,
      version: trialRecords.version,
      updatedAt: trialRecords.updatedAt,
    })
    .from(trialRecords)
    .leftJoin(trialEvents, and(eq(trialEvents.projectId, trialRecords.projectId), eq(trialEvents.eventName, trialRecords.eventName)))
    .where(whereFilter(projectId, page))
    .orderBy(...naturalRecordOrder(trialRecords.recordId), asc(trialEvents.ordinal), sql`${trialRecords.eventName} COLLATE "C"`)
    .$dynamic();
  if (page.limit !== undefined) query = query.limit(page.limit);
  if (page.offset !== undefined) query = query.offset(page.offset);
  const rows = await query;
  return rows.map((row) => ({ ...row, updatedAt: row.updatedAt.toISOString() }));
}

/** Every event of one subject, in schedule order; empty when the record id is unknown. */
export async function getRecord(db: Db, projectId: string, recordId: string): Promise<StoredRecord[]> {
  return listRecords(db, projectId, { recordIds: [recordId] });
}

/** Rows (for paging through listRecords) and distinct subjects matching the same filter. */
export async function countRecords(db: Db, projectId: string, filter: RecordFilter = {}): Promise<{ rows: number; subjects: number }> {
  if (filter.recordIds?.length === 0) return { rows: 0, subjects: 0 };
  const [row] = await db
    .select({ rows: count(), subjects: countDistinct(trialRecords.recordId) })
    .from(trialRecords)
    .where(whereFilter(projectId, filter));
  return { rows: Number(row?.rows ?? 0), subjects: Number(row?.subjects ?? 0) };
}

/** Sites (REDCap data access groups) with their number of subjects; '' stands for records without a group. */
export async function listSites(db: Db, projectId: string): Promise<Array<{ site: string; subjects: number }>> {
  const rows = await db
    .select({ site: trialRecords.site, subjects: countDistinct(trialRecords.recordId) })
    .from(trialRecords)
    .where(eq(trialRecords.projectId, projectId))
    .groupBy(trialRecords.site)
    .orderBy(sql`${trialRecords.site} COLLATE "C"`);
  return rows.map((row) => ({ site: row.site, subjects: Number(row.subjects) }));
}

function whereFilter(projectId: string, filter: RecordFilter): SQL | undefined {
  return and(
    eq(trialRecords.projectId, projectId),
    filter.site === undefined ? undefined : eq(trialRecords.site, filter.site),
    filter.recordIds === undefined ? undefined : inArray(trialRecords.recordId, [...filter.recordIds]),
  );
}

function assertPaging(page: RecordPage): void {
  for (const key of ['limit', 'offset'] as const) {
    const value = page[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
      throw new ClinAgentError('VALIDATION_FAILED', `${key} must be a whole number of 0 or more, got ${String(value)}.`, { field: key });
    }
  }
}
