import { canViewIdentifiers } from '../core/auth/identifier-access.js';
import type { User } from '../core/auth/users.js';
import type { Db } from '../core/db/connect.js';
import type { ReportRow } from './report/violations-report.js';
import { identifierFields } from './store/dictionary.js';
import type { AuditEntry, RecordValue } from './store/types.js';

/**
 * Masking of identifier fields for users who may not see them (core/auth/identifier-access.ts decides who).
 * How a masked value looks:
 * - record rows (`data`) and audit entries of records: the value is null and the row lists the field in
 *   `maskedFields`, so a client can tell "masked" from "blank" and show it as such;
 * - data queries: `value` is null and `masked` is true;
 * - the violations report (JSON, CSV, XLSX): `value` is MASKED_TEXT and `masked` is true, since a spreadsheet
 *   cell has no flag to carry.
 * Every identifier field in a row is masked, blank ones included, so the mask does not reveal which are filled.
 */
export const MASKED_TEXT = '••••';

export interface IdentifierMask {
  /** False when the user sees everything; then every method returns its input unchanged. */
  isMasking: boolean;
  /** Whether a record field (`phone`, `hobby___1`) or a query field (`v1_arm_1.phone`) is an identifier. */
  isIdentifier(field: string): boolean;
  record<T extends { data: Record<string, RecordValue> }>(row: T): T & { maskedFields: string[] };
  query<T extends { field: string; value: unknown }>(query: T): T & { masked: boolean };
  reportRow(row: ReportRow): ReportRow & { masked: boolean };
  auditEntry(entry: AuditEntry): AuditEntry & { maskedFields?: string[] };
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

  return {
    isMasking,
    isIdentifier,
    record: (row) => (isMasking ? { ...row, ...maskData(row.data) } : { ...row, maskedFields: [] }),
    query: (query) => (isMasking && isIdentifier(query.field) ? { ...query, value: null, masked: true } : { ...query, masked: false }),
    reportRow: (row) => (isMasking && isIdentifier(row.field) ? { ...row, value: MASKED_TEXT, masked: true } : { ...row, masked: false }),
    auditEntry(entry) {
      if (!isMasking || entry.entityType !== 'record') return entry;
      const maskedFields = new Set<string>();
      const maskSide = (side: unknown) => {
        if (!isRecordSnapshot(side)) return side;
        const { data, maskedFields: fieldsOfSide } = maskData(side.data);
        fieldsOfSide.forEach((field) => maskedFields.add(field));
        return { ...side, data };
      };
      const oldValue = maskSide(entry.oldValue);
      const newValue = maskSide(entry.newValue);
      return maskedFields.size ? { ...entry, oldValue, newValue, maskedFields: [...maskedFields] } : entry;
    },
  };
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
