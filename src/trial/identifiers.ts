import { inArray } from 'drizzle-orm';
import { canViewIdentifiers } from '../core/auth/identifier-access.js';
import type { User } from '../core/auth/users.js';
import type { Db } from '../core/db/connect.js';
import { pendingActions } from '../core/db/schema/trial.js';
import { isUuid } from '../core/ids.js';
import type { ReportRow } from './report/violations-report.js';
import { describeValue } from './rules/operator-error.js';
import { withoutEvaluationDetail } from './rules/run-rules.js';
import { identifierFields } from './store/dictionary.js';
import type { AuditEntry, RecordValue } from './store/types.js';

/**
 * Masking of identifier fields for users who may not see them (core/auth/identifier-access.ts decides who).
 * How a masked value looks:
 * - record rows (`data`) and audit entries of records: the value is null and the row lists the field in
 *   `maskedFields`, so a client can tell "masked" from "blank" and show it as such;
 * - data queries: `value` is null and `masked` is true;
 * - the violations report (JSON, CSV, XLSX): `value` is MASKED_TEXT and `masked` is true, since a spreadsheet
 *   cell has no flag to carry;
 * - audit entries of any kind (records, queries, runs): as record rows for snapshots, and `value: null` for a
 *   value of an identifier field, with `maskedFields`;
 * - messages that quote a masked value (an operator's error on a birth date) have its text replaced by MASKED_TEXT.
 * Every identifier field in a row is masked, blank ones included, so the mask does not reveal which are filled.
 */
export const MASKED_TEXT = '••••';

export interface IdentifierMask {
  /** False when the user sees everything; then every method returns its input unchanged. */
  isMasking: boolean;
  /** Whether a record field (`phone`, `hobby___1`) or a query field (`v1_arm_1.phone`) is an identifier. */
  isIdentifier(field: string): boolean;
  record<T extends { data: Record<string, RecordValue> }>(row: T): T & { maskedFields: string[] };
  query<T extends { field: string; value: unknown; message?: string }>(query: T): T & { masked: boolean };
  reportRow(row: ReportRow): ReportRow & { masked: boolean };
  /**
   * Any audit entry: record snapshots (`{data}`) lose their identifier fields, and every `value` that belongs to an
   * identifier field (the object's own `field`, else `field` for entries that do not name it, such as a query's
   * `fired_again`) becomes null, its text also cut out of messages beside it. Masked entries list `maskedFields`.
   */
  /** `field` null: the entry's value belongs to a field that can no longer be named, so it is masked too. */
  auditEntry(entry: AuditEntry, field?: string | null): AuditEntry & { maskedFields?: string[] };
}

/** The mask for `user` reading `projectId`; without a user nothing identifying is shown. */
export async function identifierMask(db: Db, projectId: string, user: Pick<User, 'id' | 'role'> | undefined): Promise<IdentifierMask> {
  const ordered = await identifierFields(db, projectId);
  const fields = new Set(ordered);
  const position = (key: string) => ordered.indexOf(baseFieldName(key));
  const isMasking = fields.size > 0 && !(user && (await canViewIdentifiers(db, projectId, user)));
  const isIdentifier = (field: string) => fields.has(baseFieldName(field));

  function maskData(data: Record<string, RecordValue>): { data: Record<string, RecordValue>; maskedFields: string[] } {
    // In dictionary order, as the console shows fields; jsonb returns keys in its own order.
    const maskedFields = Object.keys(data)
      .filter(isIdentifier)
      .sort((a, b) => position(a) - position(b) || a.localeCompare(b));
    if (!maskedFields.length) return { data, maskedFields };
    const masked = { ...data };
    for (const field of maskedFields) masked[field] = null;
    return { data: masked, maskedFields };
  }

  /**
   * Walks an audit value: `{data}` snapshots, and objects carrying a `value` of an identifier field (their own
   * `field`, or the one inherited from the entry). Bounded depth, as audit values are small documents.
   */
  function maskAuditValue(value: unknown, field: string | null | undefined, maskedFields: Set<string>, depth = 0): unknown {
    if (depth > 8 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => maskAuditValue(item, field, maskedFields, depth + 1));
    const object = value as Record<string, unknown>;
    const own = typeof object.field === 'string' ? object.field : field;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(object)) out[key] = maskAuditValue(inner, own, maskedFields, depth + 1);
    if (isRecordSnapshot(object)) {
      const { data, maskedFields: ofSnapshot } = maskData(object.data);
      ofSnapshot.forEach((name) => maskedFields.add(name));
      out.data = data;
    }
    if ((own === null || (own !== undefined && isIdentifier(own))) && 'value' in object) {
      // A field that can no longer be named still marks the entry as masked, under the name the reader can be shown.
      maskedFields.add(own === null ? 'value' : baseFieldName(own));
      out.value = null;
      for (const key of ['message', 'reason'] as const) {
        if (typeof object[key] === 'string') out[key] = withoutValueText(object[key], object.value);
      }
    }
    return out;
  }

  return {
    isMasking,
    isIdentifier,
    record: (row) => (isMasking ? { ...row, ...maskData(row.data) } : { ...row, maskedFields: [] }),
    query: (query) =>
      isMasking && isIdentifier(query.field)
        ? { ...query, value: null, ...(typeof query.message === 'string' ? { message: withoutValueText(query.message, query.value) } : {}), masked: true }
        : { ...query, masked: false },
    reportRow: (row) =>
      isMasking && isIdentifier(row.field) ? { ...row, value: MASKED_TEXT, message: withoutValueText(row.message, row.value), masked: true } : { ...row, masked: false },
    auditEntry(entry, field) {
      if (!isMasking) return entry;
      const maskedFields = new Set<string>();
      const oldValue = maskAuditValue(entry.oldValue, field, maskedFields);
      const newValue = maskAuditValue(entry.newValue, field, maskedFields);
      if (!maskedFields.size) return entry;
      const reason = field === null || (field !== undefined && isIdentifier(field)) ? withoutValueText(entry.reason, (entry.newValue as { value?: unknown } | null)?.value) : entry.reason;
      return { ...entry, oldValue, newValue, reason, maskedFields: [...maskedFields].sort((a, b) => position(a) - position(b) || a.localeCompare(b)) };
    },
  };
}

/**
 * The audit trail as `mask` lets its reader see it. Query entries such as `fired_again` carry a value without
 * naming the field, so each query's field is looked up once for the whole list.
 */
export async function maskAuditEntries(db: Db, mask: IdentifierMask, entries: AuditEntry[]): Promise<Array<AuditEntry & { maskedFields?: string[] }>> {
  if (!mask.isMasking) return entries;
  const queryIds = [...new Set(entries.filter((e) => e.entityType === 'query' && isUuid(e.entityId)).map((e) => e.entityId))];
  const fieldOf = new Map<string, string>();
  for (let start = 0; start < queryIds.length; start += 1000) {
    const rows = await db.select({ id: pendingActions.id, field: pendingActions.field }).from(pendingActions).where(inArray(pendingActions.id, queryIds.slice(start, start + 1000)));
    rows.forEach((row) => fieldOf.set(row.id, row.field));
  }
  // A query whose row is gone (its run deleted) cannot say its field any more: its values are masked all the same.
  return entries.map((entry) => mask.auditEntry(entry, entry.entityType === 'query' ? (fieldOf.get(entry.entityId) ?? null) : undefined));
}

/**
 * `message` with the text of each of `values` replaced by MASKED_TEXT. Findings pass through this with the values
 * of the record's identifier fields before they are stored: a rule attached to one field can read an identifier
 * in another (`date_before: [birth_date, ...]` on `age`) and its error quotes what it read, which read-time
 * masking, going by the finding's own field, would not know to hide.
 */
export function withoutIdentifierValues(message: string, values: readonly unknown[]): string {
  let out = message;
  for (const value of values) out = withoutValueText(out, value);
  return quotesPartOf(out, values) ? (withoutEvaluationDetail(out) ?? out) : out;
}

/**
 * Whether the message quotes part of an identifier value: a rule that cut a value before the operator failed
 * (`substr` of a birth date gives "1991"; a phone number modulo 10 000 gives 8000) quotes text no whole-value
 * replacement finds, so such an error keeps only its head ("could not be evaluated"), for every reader. An
 * operator error shows a string in quotes and a number bare, so both are looked at: quoted text, and each run of
 * digits outside quotes that is not part of a name (`v1_arm_12`).
 */
function quotesPartOf(message: string, values: readonly unknown[]): boolean {
  const texts = values.filter((v) => v !== null && v !== undefined && typeof v !== 'object').map(String).filter((t) => t.length >= 2);
  if (!texts.length) return false;
  for (const [, quoted, digits] of message.matchAll(/"((?:[^"\\]|\\.){2,})"|(?<![A-Za-z_\d])(\d{2,})(?![A-Za-z_\d])/g)) {
    const part = quoted ?? digits!;
    if (part !== MASKED_TEXT && texts.some((text) => text.includes(part))) return true;
  }
  return false;
}

/**
 * A message that quotes the masked value (an operator error such as `date_before: got "1990-02-01"`) with the
 * value's text replaced. Values of one or two characters are left: replacing every "1" would garble the message
 * while hiding nothing an identifier is made of.
 */
function withoutValueText(message: string, value: unknown): string {
  if (value === null || value === undefined || typeof value === 'object') return message;
  const text = String(value);
  if (text.length < 3) return message;
  // Longest form first: an operator error quotes the value as JSON, cut short when long (describeValue).
  const forms = [describeValue(value), JSON.stringify(text), JSON.stringify(text).slice(1, -1), text];
  return forms.reduce((out, form) => out.split(form).join(MASKED_TEXT), message);
}

/**
 * `v1_arm_1.phone` -> `phone` (queries name the event before the field), `contact___2` -> `contact` (REDCap
 * exports a checkbox as one column per choice). REDCap event and field names never contain a dot.
 */
export function baseFieldName(field: string): string {
  return field.slice(field.lastIndexOf('.') + 1).replace(/___[A-Za-z0-9_-]+$/, '');
}

function isRecordSnapshot(value: unknown): value is { data: Record<string, RecordValue> } {
  return typeof value === 'object' && value !== null && typeof (value as { data?: unknown }).data === 'object' && (value as { data?: unknown }).data !== null;
}
