import type { TrialStore } from '../store/trial-store.js';
import type { TrialArm, TrialEvent } from '../store/types.js';
import { decodeUploadText } from './decode-upload.js';
import { parseArmsText } from './parse-arms.js';
import { parseDictionaryText } from './parse-dictionary.js';
import { parseEventsText } from './parse-events.js';
import { parseRecordsText } from './parse-records.js';
import { importInvalid, type ImportProblem, type Parsed } from './problems.js';
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
 * IMPORT_INVALID listing every bad line. The import and its preview both go through here.
 */
export async function checkRedcapCsv(store: TrialStore, projectId: string, files: RedcapCsvFiles): Promise<TrialExport> {
  const text = (file: CsvFile, field: 'dictionary' | 'events' | 'arms' | 'records') =>
    typeof file === 'string' ? file : decodeUploadText(file, { field, filename: files.fileNames?.[field] });
  // Decoded first, all of them: a wrongly encoded file is refused before any line is checked.
  const dictionaryText = text(files.dictionaryCsv, 'dictionary');
  const eventsText = files.eventsCsv === undefined ? undefined : text(files.eventsCsv, 'events');
  const armsText = files.armsCsv === undefined ? undefined : text(files.armsCsv, 'arms');
  const recordsText = text(files.recordsCsv, 'records');

  const dictionary = parseDictionaryText(dictionaryText, 'dictionary.csv');
  const arms: Parsed<TrialArm[]> | undefined = armsText === undefined ? undefined : parseArmsText(armsText, 'arms.csv');
  // Events are checked against the arms only when the arms themselves are usable.
  const armsForEvents = arms && arms.problems.length === 0 ? { arms: arms.value, armsSource: 'arms.csv' } : {};
  let events: Parsed<TrialEvent[]>;
  if (eventsText === undefined) {
    const stored = await store.getEvents(projectId);
    events = { value: stored, problems: storedEventProblems(stored, arms) };
  } else {
    events = parseEventsText(eventsText, 'events.csv', armsForEvents);
  }
  const problems: ImportProblem[] = [...dictionary.problems, ...(arms?.problems ?? []), ...events.problems];
  if (problems.length > 0) {
    // Checked against a broken dictionary or schedule, every record row would show misleading problems.
    problems.push({ source: 'records.csv', line: 1, field: '(file)', value: '', problem: 'not checked yet; fix the dictionary, arms and events problems first, then import again' });
    throw importInvalid(problems);
  }
  const records = parseRecordsText(recordsText, { fields: dictionary.value, events: events.value }, 'records.csv');
  if (records.problems.length > 0) throw importInvalid(records.problems);

  return { fields: dictionary.value, events: eventsText === undefined ? undefined : events.value, arms: arms?.value, records: records.value, warnings: records.warnings };
}

/** A new arms file without an events file must still cover the arms of the stored schedule. */
function storedEventProblems(stored: ReadonlyArray<TrialEvent>, arms: Parsed<TrialArm[]> | undefined): ImportProblem[] {
  if (!arms || arms.problems.length > 0) return [];
  const known = new Set(arms.value.map((arm) => arm.armNum));
  const orphans = stored.filter((event) => !known.has(event.armNum ?? 1));
  if (orphans.length === 0) return [];
  const armNums = [...new Set(orphans.map((event) => event.armNum ?? 1))].join(', ');
  return [
    {
      source: 'arms.csv',
      line: 1,
      field: 'arm_num',
      value: armNums,
      problem: `the project's stored events ${orphans.map((event) => event.eventName).join(', ')} are in arm ${armNums}, which this file does not define; send the events file of the same export too, or add the arm`,
    },
  ];
}
