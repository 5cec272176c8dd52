import type { TrialArm, TrialEvent } from '../store/types.js';
import { decodeUploadText } from './decode-upload.js';
import type { CsvFile, RedcapCsvFiles } from './import-redcap-csv.js';
import { parseArmsText } from './parse-arms.js';
import { parseDictionaryText } from './parse-dictionary.js';
import { parseEventsText } from './parse-events.js';
import { parseRecordsText } from './parse-records.js';
import { importInvalid, type ImportProblem, type Parsed } from './problems.js';
import type { TrialExport } from './write-trial-export.js';

type FilePart = 'dictionary' | 'events' | 'arms' | 'records';

/** What problems call each file: the name it was uploaded with, else the name REDCap gives it. */
function csvSourceNames(files: Pick<RedcapCsvFiles, 'fileNames'>): Record<FilePart, string> {
  const name = (part: FilePart) => files.fileNames?.[part]?.trim() || `${part}.csv`;
  return { dictionary: name('dictionary'), events: name('events'), arms: name('arms'), records: name('records') };
}

/**
 * Decodes and checks every file of the export, writing nothing (no database either: `storedEvents` is the
 * project's schedule, which a file without events is checked against). Runs in the import worker thread.
 */
export function checkRedcapCsvFiles(files: RedcapCsvFiles, storedEvents: ReadonlyArray<TrialEvent>): TrialExport {
  const sources = csvSourceNames(files);
  const text = (file: CsvFile, field: FilePart) =>
    typeof file === 'string' ? file : decodeUploadText(file, { field, filename: files.fileNames?.[field] });
  // Decoded first, all of them: a wrongly encoded file is refused before any line is checked.
  const dictionaryText = text(files.dictionaryCsv, 'dictionary');
  const eventsText = files.eventsCsv === undefined ? undefined : text(files.eventsCsv, 'events');
  const armsText = files.armsCsv === undefined ? undefined : text(files.armsCsv, 'arms');
  const recordsText = text(files.recordsCsv, 'records');

  const dictionary = parseDictionaryText(dictionaryText, sources.dictionary);
  const arms: Parsed<TrialArm[]> | undefined = armsText === undefined ? undefined : parseArmsText(armsText, sources.arms);
  // Events are checked against the arms only when the arms themselves are usable.
  const armsForEvents = arms && arms.problems.length === 0 ? { arms: arms.value, armsSource: sources.arms } : {};
  let events: Parsed<TrialEvent[]>;
  if (eventsText === undefined) {
    events = { value: [...storedEvents], problems: storedEventProblems(storedEvents, arms, sources.arms) };
  } else {
    events = parseEventsText(eventsText, sources.events, armsForEvents);
  }
  const problems: ImportProblem[] = [...dictionary.problems, ...(arms?.problems ?? []), ...events.problems];
  if (problems.length > 0) {
    // Checked against a broken dictionary or schedule, every record row would show misleading problems.
    problems.push({ source: sources.records, line: 1, field: '(file)', value: '', problem: 'not checked yet; fix the dictionary, arms and events problems first, then import again' });
    throw importInvalid(problems);
  }
  const records = parseRecordsText(recordsText, { fields: dictionary.value, events: events.value }, sources.records);
  if (records.problems.length > 0) throw importInvalid(records.problems);

  return { fields: dictionary.value, events: eventsText === undefined ? undefined : events.value, arms: arms?.value, records: records.value, warnings: records.warnings };
}

/** A new arms file without an events file must still cover the arms of the stored schedule. */
function storedEventProblems(stored: ReadonlyArray<TrialEvent>, arms: Parsed<TrialArm[]> | undefined, armsSource: string): ImportProblem[] {
  if (!arms || arms.problems.length > 0) return [];
  const known = new Set(arms.value.map((arm) => arm.armNum));
  const orphans = stored.filter((event) => !known.has(event.armNum ?? 1));
  if (orphans.length === 0) return [];
  const armNums = [...new Set(orphans.map((event) => event.armNum ?? 1))].join(', ');
  return [
    {
      source: armsSource,
      line: 1,
      field: 'arm_num',
      value: armNums,
      problem: `the project's stored events ${orphans.map((event) => event.eventName).join(', ')} are in arm ${armNums}, which this file does not define; send the events file of the same export too, or add the arm`,
    },
  ];
}
