import type { ImportRecordsResult } from '../store/import-records.js';
import type { TrialStore } from '../store/trial-store.js';
import type { TrialEvent, TrialField, TrialRecord } from '../store/types.js';

/** A checked export, from CSV files or the REDCap API. Without `events` the stored schedule is kept. */
export interface TrialExport {
  fields: ReadonlyArray<TrialField>;
  events?: ReadonlyArray<TrialEvent>;
  records: ReadonlyArray<TrialRecord>;
}

export interface TrialImportSummary {
  fields: number;
  events: number;
  records: ImportRecordsResult;
  isDictionaryChanged: boolean;
  isEventsChanged: boolean;
}

/**
 * Writes dictionary, schedule and records of one export as one change: a dictionary without the records
 * that match it (or the reverse) would make QC check records against the wrong definitions.
 */
export async function writeTrialExport(store: TrialStore, projectId: string, data: TrialExport, actor: string, reason: string): Promise<TrialImportSummary> {
  return store.transaction(async (tx) => {
    const isDictionaryChanged = await tx.replaceDictionary(projectId, data.fields, actor, reason);
    const isEventsChanged = data.events === undefined ? false : await tx.replaceEvents(projectId, data.events, actor, reason);
    const records = await tx.importRecords(projectId, data.records, { actor, reason });
    const events = data.events?.length ?? (await tx.getEvents(projectId)).length;
    return { fields: data.fields.length, events, records, isDictionaryChanged, isEventsChanged };
  });
}
