import type { RecordValue, TrialRecord } from './types.js';

/** What changed in one (record, event) row: the old and new value of each changed field, site included. */
export interface RecordChange {
  oldValue: { eventName: string; site?: string; data: Record<string, RecordValue> };
  newValue: { eventName: string; site?: string; data: Record<string, RecordValue> };
}

/**
 * Compares a stored row with an incoming one field by field. A field absent on one side counts as null,
 * so re-importing an export that lists a blank column the stored row never had is not a change (jsonb
 * drops nothing, but REDCap exports add columns when forms are added). Returns null when nothing changed,
 * which is what keeps a repeated import from bumping versions or writing audit entries.
 */
export function diffRecord(stored: Pick<TrialRecord, 'eventName' | 'site' | 'data'>, incoming: Pick<TrialRecord, 'eventName' | 'site' | 'data'>): RecordChange | null {
  const oldData: Record<string, RecordValue> = {};
  const newData: Record<string, RecordValue> = {};
  const fields = new Set([...Object.keys(stored.data), ...Object.keys(incoming.data)]);
  for (const field of fields) {
    const before = stored.data[field] ?? null;
    const after = incoming.data[field] ?? null;
    if (before !== after) {
      oldData[field] = before;
      newData[field] = after;
    }
  }
  const isSiteChanged = stored.site !== incoming.site;
  if (!isSiteChanged && Object.keys(newData).length === 0) return null;
  return {
    oldValue: { eventName: stored.eventName, ...(isSiteChanged ? { site: stored.site } : {}), data: oldData },
    newValue: { eventName: incoming.eventName, ...(isSiteChanged ? { site: incoming.site } : {}), data: newData },
  };
}

