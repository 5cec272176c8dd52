import { formatValue } from '../../i18n/format';

export interface AuditChange {
  key: string;
  /** '' when the key was absent or blank on that side. */
  before: string;
  after: string;
}

export interface AuditSummary {
  /** The visit the entry is about, when it names one (record entries do). */
  eventName: string | null;
  changes: AuditChange[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Record entries keep field values under `data`; lift them so a field reads "sbp: 150 -> 145", not a JSON blob. */
function flatten(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) return { value };
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'data' && isPlainObject(inner)) Object.assign(out, inner);
    else out[key] = inner;
  }
  return out;
}

/**
 * What an audit entry changed, key by key, from its old and new value. Keys equal on both sides are left
 * out (a record update stores only the changed fields, but a status change repeats unchanged context).
 */
export function summarizeAudit(oldValue: unknown, newValue: unknown): AuditSummary {
  const before = flatten(oldValue);
  const after = flatten(newValue);
  const eventName = typeof after.eventName === 'string' ? after.eventName : typeof before.eventName === 'string' ? before.eventName : null;
  delete before.eventName;
  delete after.eventName;
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changes: AuditChange[] = [];
  for (const key of keys) {
    const was = formatValue(before[key]);
    const now = formatValue(after[key]);
    if (was !== now) changes.push({ key, before: was, after: now });
  }
  return { eventName, changes };
}
