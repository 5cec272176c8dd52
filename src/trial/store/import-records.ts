import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { appendAuditEntries } from './audit.js';
import { lockProject } from './project.js';
import { diffRecord, type RecordChange } from './record-diff.js';
import type { AuditEntryInput, RecordValue, TrialRecord } from './types.js';

export interface ImportRecordsOptions {
  actor: string;
  /** Why the data changed, e.g. "Monthly REDCap export 2025-06"; kept on every audit entry. */
  reason?: string;
}

export interface ImportRecordsResult {
  created: number;
  updated: number;
  unchanged: number;
}

// Rows per INSERT and record ids per lookup: far below PostgreSQL's 65,535 bind parameters, and small
// enough that PGlite's single connection is never held by one huge statement.
const ROWS_PER_STATEMENT = 500;

/**
 * Upserts (record, event) rows in one transaction: all rows land or none. A row whose values are unchanged
 * keeps its version and gets no audit entry, so re-importing the same export is a no-op. Rows stored but
 * absent from `records` are kept: a REDCap export may cover only some subjects, and deleting trial data
 * is a decision for a person, not a side effect of an import.
 */
export async function importRecords(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>, options: ImportRecordsOptions): Promise<ImportRecordsResult> {
  assertUniqueRows(records);
  const reason = options.reason ?? '';
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockProject(tx, projectId);
    const toInsert: TrialRecord[] = [];
    const audit: AuditEntryInput[] = [];
    let updated = 0;
    for (const { record, change } of await changedRows(tx, projectId, records)) {
      if (!change) {
        toInsert.push(record);
        audit.push({ projectId, entityType: 'record', entityId: record.recordId, action: 'record.create', actor: options.actor, oldValue: null, newValue: { eventName: record.eventName, site: record.site, data: record.data }, reason });
        continue;
      }
      await tx
        .update(trialRecords)
        .set({ site: record.site, data: record.data, version: sql`${trialRecords.version} + 1`, updatedAt: new Date() })
        .where(and(eq(trialRecords.projectId, projectId), eq(trialRecords.recordId, record.recordId), eq(trialRecords.eventName, record.eventName)));
      audit.push({ projectId, entityType: 'record', entityId: record.recordId, action: 'record.update', actor: options.actor, ...change, reason });
      updated += 1;
    }
    for (let start = 0; start < toInsert.length; start += ROWS_PER_STATEMENT) {
      const batch = toInsert.slice(start, start + ROWS_PER_STATEMENT);
      await tx.insert(trialRecords).values(batch.map((record) => ({ projectId, recordId: record.recordId, eventName: record.eventName, site: record.site, data: record.data })));
    }
    await appendAuditEntries(tx, audit);
    return { created: toInsert.length, updated, unchanged: records.length - toInsert.length - updated };
  });
}

/**
 * What importRecords would do with `records`, reading only: how many rows it would create, update and leave
 * unchanged, decided by the same comparison. An import preview answers it before anything is written.
 */
export async function compareRecords(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>): Promise<ImportRecordsResult> {
  assertUniqueRows(records);
  const changed = await changedRows(db, projectId, records);
  const created = changed.filter((row) => !row.change).length;
  return { created, updated: changed.length - created, unchanged: records.length - changed.length };
}

/** The rows an import changes, in order: new ones (change null) and stored ones whose values differ (their change). */
async function changedRows(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>): Promise<Array<{ record: TrialRecord; change: RecordChange | null }>> {
  const stored = await selectStoredRows(db, projectId, [...new Set(records.map((record) => record.recordId))]);
  const changed: Array<{ record: TrialRecord; change: RecordChange | null }> = [];
  for (const record of records) {
    const before = stored.get(rowKey(record));
    if (!before) {
      changed.push({ record, change: null });
      continue;
    }
    const change = diffRecord(before, record);
    if (change) changed.push({ record, change });
  }
  return changed;
}

type StoredRow = { eventName: string; site: string; data: Record<string, RecordValue> };

async function selectStoredRows(db: Db, projectId: string, recordIds: string[]): Promise<Map<string, StoredRow>> {
  const rows = new Map<string, StoredRow>();
  for (let start = 0; start < recordIds.length; start += ROWS_PER_STATEMENT) {
    const ids = recordIds.slice(start, start + ROWS_PER_STATEMENT);
    const found = await db
      .select({ recordId: trialRecords.recordId, eventName: trialRecords.eventName, site: trialRecords.site, data: trialRecords.data })
      .from(trialRecords)
      .where(and(eq(trialRecords.projectId, projectId), inArray(trialRecords.recordId, ids)));
    for (const row of found) rows.set(rowKey(row), row);
  }
  return rows;
}

/** The parsers already refuse duplicates with line numbers; this guards callers that build records in code. */
function assertUniqueRows(records: ReadonlyArray<TrialRecord>): void {
  const seen = new Set<string>();
  for (const [index, record] of records.entries()) {
    if (!record.recordId) throw new ClinAgentError('VALIDATION_FAILED', `records[${index}].recordId is empty. Give every row its record id.`, { field: `records[${index}].recordId` });
    const key = rowKey(record);
    if (seen.has(key)) {
      throw new ClinAgentError('VALIDATION_FAILED', `records[${index}] repeats record "${record.recordId}" at event "${record.eventName}". Merge the two rows into one.`, { field: `records[${index}]`, recordId: record.recordId, eventName: record.eventName });
    }
    seen.add(key);
  }
}

const rowKey = (row: { recordId: string; eventName: string }): string => JSON.stringify([row.recordId, row.eventName]);
