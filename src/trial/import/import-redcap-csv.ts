import type { TrialStore } from '../store/trial-store.js';
import { parseDictionaryText } from './parse-dictionary.js';
import { parseEventsText } from './parse-events.js';
import { parseRecordsText } from './parse-records.js';
import { importInvalid, type ImportProblem } from './problems.js';
import { writeTrialExport, type TrialImportSummary } from './write-trial-export.js';

/** The files of a REDCap CSV export, as text. Without `eventsCsv` the project's stored schedule is used. */
export interface RedcapCsvFiles {
  dictionaryCsv: string;
  eventsCsv?: string;
  recordsCsv: string;
}

export type RedcapCsvImportSummary = TrialImportSummary;

/**
 * Imports a site's REDCap export (for sites without API access): checks all three files completely, then
 * writes dictionary, events and records in one transaction. Any problem in any file raises IMPORT_INVALID
 * listing every bad line, and nothing is written, not even audit entries.
 */
export async function importRedcapCsv(
  store: TrialStore,
  projectId: string,
  files: RedcapCsvFiles,
  actor: string,
  options: { reason?: string } = {},
): Promise<RedcapCsvImportSummary> {
  const reason = options.reason ?? 'REDCap CSV import';
  const dictionary = parseDictionaryText(files.dictionaryCsv, 'dictionary.csv');
  const events = files.eventsCsv === undefined ? { value: await store.getEvents(projectId), problems: [] } : parseEventsText(files.eventsCsv, 'events.csv');
  const problems: ImportProblem[] = [...dictionary.problems, ...events.problems];
  if (problems.length > 0) {
    // Checked against a broken dictionary or schedule, every record row would show misleading problems.
    problems.push({ source: 'records.csv', line: 1, field: '(file)', value: '', problem: 'not checked yet; fix the dictionary and events problems first, then import again' });
    throw importInvalid(problems);
  }
  const records = parseRecordsText(files.recordsCsv, { fields: dictionary.value, events: events.value }, 'records.csv');
  if (records.problems.length > 0) throw importInvalid(records.problems);

  return writeTrialExport(store, projectId, { fields: dictionary.value, events: files.eventsCsv === undefined ? undefined : events.value, records: records.value }, actor, reason);
}
