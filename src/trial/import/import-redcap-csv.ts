import type { TrialStore } from '../store/trial-store.js';
import { parseOffLoop } from './off-loop/parse-off-loop.js';
import { writeTrialExport, type TrialExport, type TrialImportSummary } from './write-trial-export.js';

/**
 * A file of the export: text, or the uploaded bytes (decoded here: UTF-8 with or without BOM, or GBK/GB18030
 * as Excel on Chinese Windows saves it; anything else is refused rather than stored garbled).
 */
export type CsvFile = string | Uint8Array;

/**
 * The files of a REDCap CSV export. Without `eventsCsv` the project's stored schedule is used; without
 * `armsCsv` the stored arms are kept. `fileNames` are the names the user's files had, for error messages.
 */
export interface RedcapCsvFiles {
  dictionaryCsv: CsvFile;
  eventsCsv?: CsvFile;
  armsCsv?: CsvFile;
  recordsCsv: CsvFile;
  fileNames?: Partial<Record<'dictionary' | 'events' | 'arms' | 'records', string>>;
}

export type RedcapCsvImportSummary = TrialImportSummary;

/**
 * Imports a site's REDCap export (for sites without API access): checks all files completely, then writes
 * dictionary, arms, events and records in one transaction. Any problem in any file raises IMPORT_INVALID
 * listing every bad line, and nothing is written, not even audit entries. Values outside their validation
 * min/max are imported and listed in the summary's `warnings`.
 */
export async function importRedcapCsv(
  store: TrialStore,
  projectId: string,
  files: RedcapCsvFiles,
  actor: string,
  options: { reason?: string } = {},
): Promise<RedcapCsvImportSummary> {
  return writeTrialExport(store, projectId, await checkRedcapCsv(store, projectId, files), actor, options.reason ?? 'REDCap CSV import');
}

/**
 * Decodes and checks every file of the export, writing nothing: the export as the import writes it, or
 * IMPORT_INVALID listing every bad line. The import and its preview both go through here. The files are read in
 * a worker thread (a 50 MB export is seconds of parsing, which on the server's thread would stop every other
 * request); only the stored schedule, which a file without events is checked against, is read here.
 */
export async function checkRedcapCsv(store: TrialStore, projectId: string, files: RedcapCsvFiles): Promise<TrialExport> {
  const storedEvents = files.eventsCsv === undefined ? await store.getEvents(projectId) : [];
  return parseOffLoop({ kind: 'csv', files, storedEvents });
}
