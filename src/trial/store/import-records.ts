import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { appendAuditEntries } from './audit.js';
import { lockProject } from './project.js';
import { diffRecord, type RecordChange } from './record-diff.js';
import type { AuditEntryInput, RecordValue, TrialRecord } from './types.js';
import { withTransaction } from '../../core/db/transaction.js';

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
// Characters of values per INSERT: the embedded database runs each statement on the server's thread, and its
// awaits resolve without giving timers and sockets a turn, so a batch of wide rows (10 000 fields, or long
// text) is cut here and the server answers other requests between batches.
const VALUE_CHARS_PER_STATEMENT = 512 * 1024;
// Rows compared between two turns of the event loop.
const ROWS_PER_TURN = 2000;

/**
 * Upserts (record, event) rows in one transaction: all rows land or none. A row whose values are unchanged
 * keeps its version and gets no audit entry, so re-importing the same export is a no-op. Rows stored but
 * absent from `records` are kept: a REDCap export may cover only some subjects, and deleting trial data
 * is a decision for a person, not a side effect of an import.
 */
export async function importRecords(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>, options: ImportRecordsOptions): Promise<ImportRecordsResult> {
  assertUniqueRows(records);
  const reason = options.reason ?? '';
  return withTransaction(db, async (tx) => {
    await lockProject(tx, projectId);
    const toInsert: TrialRecord[] = [];
    const audit: AuditEntryInput[] = [];
    let updated = 0;
    let turn = 0;
    for (const { record, change } of await changedRows(tx, projectId, records)) {
      if (++turn % ROWS_PER_TURN === 0) await yieldToEventLoop();
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
    for (const batch of batchesOf(toInsert)) {
      await yieldToEventLoop();
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
export async function compareRecords(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>): Promise<RecordComparison> {
  assertUniqueRows(records);
  const changed = await changedRows(db, projectId, records);
  const created = changed.filter((row) => !row.change).length;
  const changedValues: ChangedValue[] = [];
  let valueCount = 0;
  for (const { record, change } of changed) {
    if (!change) continue;
    if (change.newValue.site !== undefined) {
      valueCount += 1;
      if (changedValues.length < CHANGED_VALUES_LISTED) changedValues.push({ recordId: record.recordId, eventName: record.eventName, field: SITE_FIELD, oldValue: change.oldValue.site ?? null, newValue: change.newValue.site });
    }
    // In the export's column order (the stored row's keys come back in the database's own order).
    const fields = [...new Set([...Object.keys(record.data), ...Object.keys(change.newValue.data)])].filter((field) => Object.hasOwn(change.newValue.data, field));
    for (const field of fields) {
      valueCount += 1;
      if (changedValues.length < CHANGED_VALUES_LISTED) changedValues.push({ recordId: record.recordId, eventName: record.eventName, field, oldValue: change.oldValue.data[field] ?? null, newValue: change.newValue.data[field] ?? null });
    }
  }
  return { created, updated: changed.length - created, unchanged: records.length - changed.length, changedValues, moreChangedValues: valueCount - changedValues.length };
}

/** One value an import would change in a stored row: the record, event and field, its old and new value. */
export interface ChangedValue {
  recordId: string;
  eventName: string;
  /** The field, or SITE_FIELD when the row moves to another site. */
  field: string;
  oldValue: RecordValue;
  newValue: RecordValue;
}

/** What an import would do, counted, with the first CHANGED_VALUES_LISTED values it would change. */
export interface RecordComparison extends ImportRecordsResult {
  changedValues: ChangedValue[];
  /** Changed values beyond those listed. */
  moreChangedValues: number;
}

/** The site of a row, as REDCap's export names its column. */
const SITE_FIELD = 'redcap_data_access_group';
// Enough to check a correction import at a glance; the count says how many more there are.
const CHANGED_VALUES_LISTED = 100;

/** The rows an import changes, in order: new ones (change null) and stored ones whose values differ (their change). */
async function changedRows(db: Db, projectId: string, records: ReadonlyArray<TrialRecord>): Promise<Array<{ record: TrialRecord; change: RecordChange | null }>> {
  const recordIds = [...new Set(records.map((record) => record.recordId))];
  // The stored rows of a record are about as wide as the incoming ones: look up as many ids at once as give
  // a statement of about VALUE_CHARS_PER_STATEMENT characters.
  const sample = records.slice(0, 20);
  const charsPerId = (sample.reduce((sum, record) => sum + valueChars(record), 0) / Math.max(1, sample.length)) * (records.length / Math.max(1, recordIds.length));
  const idsPerLookup = Math.max(1, Math.min(ROWS_PER_STATEMENT, Math.floor(VALUE_CHARS_PER_STATEMENT / Math.max(1, charsPerId))));
  const stored = await selectStoredRows(db, projectId, recordIds, idsPerLookup);
  const changed: Array<{ record: TrialRecord; change: RecordChange | null }> = [];
  for (const [index, record] of records.entries()) {
    if (index > 0 && index % ROWS_PER_TURN === 0) await yieldToEventLoop();
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

async function selectStoredRows(db: Db, projectId: string, recordIds: string[], idsPerLookup: number): Promise<Map<string, StoredRow>> {
  const rows = new Map<string, StoredRow>();
  for (let start = 0; start < recordIds.length; start += idsPerLookup) {
    if (start > 0) await yieldToEventLoop();
    const ids = recordIds.slice(start, start + idsPerLookup);
    const found = await db
      .select({ recordId: trialRecords.recordId, eventName: trialRecords.eventName, site: trialRecords.site, data: trialRecords.data })
      .from(trialRecords)
      .where(and(eq(trialRecords.projectId, projectId), inArray(trialRecords.recordId, ids)));
    for (const row of found) rows.set(rowKey(row), row);
  }
  return rows;
}

/** Rows in INSERT batches of at most ROWS_PER_STATEMENT rows and about VALUE_CHARS_PER_STATEMENT characters of values. */
function* batchesOf(records: ReadonlyArray<TrialRecord>): Generator<TrialRecord[]> {
  let batch: TrialRecord[] = [];
  let chars = 0;
  for (const record of records) {
    const size = valueChars(record);
    if (batch.length > 0 && (batch.length >= ROWS_PER_STATEMENT || chars + size > VALUE_CHARS_PER_STATEMENT)) {
      yield batch;
      batch = [];
      chars = 0;
    }
    batch.push(record);
    chars += size;
  }
  if (batch.length > 0) yield batch;
}

function valueChars(record: TrialRecord): number {
  let chars = 0;
  // for...in, not Object.entries: a row of 10 000 fields would allocate 10 000 pairs to be counted.
  for (const field in record.data) {
    const value = record.data[field];
    chars += field.length + (typeof value === 'string' ? value.length : 8);
  }
  return chars;
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
