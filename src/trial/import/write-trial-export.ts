import type { ImportRecordsResult } from '../store/import-records.js';
import type { TrialStore } from '../store/trial-store.js';
import type { TrialArm, TrialEvent, TrialField, TrialRecord } from '../store/types.js';
import type { ImportWarning } from './problems.js';

/**
 * A checked export, from CSV files or the REDCap API. Without `events` the stored schedule is kept, and
 * without `arms` the stored arms. `warnings` are the values kept although outside their validation bounds.
 */
export interface TrialExport {
  fields: ReadonlyArray<TrialField>;
  events?: ReadonlyArray<TrialEvent>;
  arms?: ReadonlyArray<TrialArm>;
  records: ReadonlyArray<TrialRecord>;
  warnings?: ReadonlyArray<ImportWarning>;
}

export interface TrialImportSummary {
  fields: number;
  events: number;
  arms: number;
  records: ImportRecordsResult;
  isDictionaryChanged: boolean;
  isEventsChanged: boolean;
  isArmsChanged: boolean;
  /** Values imported although outside the dictionary's validation min/max (the first WARNINGS_LISTED); QC reports them all. */
  warnings: ImportWarning[];
  /** Present when `warnings` was cut: how many more values were imported outside their bounds. */
  moreWarnings?: number;
}

// An export where every row is out of range would otherwise answer one warning per row, megabytes of them;
// the first hundred show the pattern, and QC raises a query for each one anyway.
const WARNINGS_LISTED = 100;

/**
 * Writes dictionary, arms, schedule and records of one export as one change: a dictionary without the
 * records that match it (or the reverse) would make QC check records against the wrong definitions.
 */
export async function writeTrialExport(store: TrialStore, projectId: string, data: TrialExport, actor: string, reason: string): Promise<TrialImportSummary> {
  return store.transaction(async (tx) => {
    const isDictionaryChanged = await tx.replaceDictionary(projectId, data.fields, actor, reason);
    const isArmsChanged = data.arms === undefined ? false : await tx.replaceArms(projectId, data.arms, actor, reason);
    const isEventsChanged = data.events === undefined ? false : await tx.replaceEvents(projectId, data.events, actor, reason);
    const records = await tx.importRecords(projectId, data.records, { actor, reason });
    const events = data.events?.length ?? (await tx.getEvents(projectId)).length;
    const arms = data.arms?.length ?? (await tx.getArms(projectId)).length;
    return { fields: data.fields.length, events, arms, records, isDictionaryChanged, isEventsChanged, isArmsChanged, ...listedWarnings(data.warnings) };
  });
}

/** The first WARNINGS_LISTED warnings, and how many more there are when that cut some. */
export function listedWarnings(all: ReadonlyArray<ImportWarning> = []): Pick<TrialImportSummary, 'warnings' | 'moreWarnings'> {
  const moreWarnings = all.length - WARNINGS_LISTED;
  return { warnings: all.slice(0, WARNINGS_LISTED), ...(moreWarnings > 0 ? { moreWarnings } : {}) };
}
