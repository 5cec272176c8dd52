import { ClinAgentError } from '../../core/errors.js';
import { redactText } from '../../core/logger.js';
import { jsonTable } from '../import/csv-table.js';
import { importTooLarge, IMPORT_LIMITS } from '../import/import-limits.js';
import { parseArmsTable } from '../import/parse-arms.js';
import { parseDictionaryTable } from '../import/parse-dictionary.js';
import { parseEventsTable } from '../import/parse-events.js';
import { parseRecordsTable, type TrialSchema } from '../import/parse-records.js';
import { valueOrThrow } from '../import/problems.js';
import type { TrialExport } from '../import/write-trial-export.js';
import { answerText, type AnswerBytes } from './read-answer.js';
import { errorText } from './redcap-error-text.js';

/** The API contents a sync reads, by REDCap's name for them (the `content` parameter). */
export type RedcapContent = 'metadata' | 'event' | 'arm' | 'record';

/**
 * What REDCap answered, as the bytes it sent (HTTP status already checked). Bytes, not text: they are moved
 * to the import worker without a copy, and decoded there.
 */
export type RedcapAnswers = Partial<Record<RedcapContent, AnswerBytes>>;

/** Answers to check in the import worker, with what their messages name. */
export interface RedcapApiRequest {
  answers: RedcapAnswers;
  /** The records' dictionary and schedule, when the answers carry no metadata (a sync reads records last). */
  schema?: TrialSchema;
  /** The API URL without credentials, as messages show it. */
  url: string;
  /** Where the URL is configured, e.g. `the apiUrl of project "demo"`. */
  urlName: string;
  /** Masked in every message: REDCap may echo the token in an answer (the token, raw and URL-encoded). */
  secrets: string[];
}

/**
 * Decodes, parses and checks REDCap API answers as the CSV import checks files: the dictionary, then the arms,
 * then the schedule against the arms, then the records against both. Runs in the import worker thread, since
 * an export of tens of MB held the server's event loop for more than a second (issue 32). Only the parts
 * answered come back; the others are empty.
 */
export function checkRedcapAnswers(request: RedcapApiRequest): Required<TrialExport> {
  const { answers } = request;
  const list = (content: RedcapContent) => answerList(request, content);
  const fields = answers.metadata ? valueOrThrow(parseDictionaryTable(jsonTable(rowsWithin(list('metadata'), 'dictionaryFields', 'REDCap API metadata'), 'REDCap API metadata'))) : [];
  const eventItems = answers.event ? list('event') : [];
  // Only a longitudinal project has arms; the client asks for them only when it has events.
  const armItems = answers.arm ? list('arm') : [];
  const arms = armItems.length === 0 ? [] : valueOrThrow(parseArmsTable(jsonTable(armItems, 'REDCap API arms')));
  // Checked like an events file against its arms file: every event must be in a known arm.
  const armsOption = arms.length > 0 ? { arms, armsSource: 'the REDCap API arms export' } : {};
  const events = eventItems.length === 0 ? [] : valueOrThrow(parseEventsTable(jsonTable(eventItems, 'REDCap API events'), armsOption));
  if (!answers.record) return { fields, events, arms, records: [], warnings: [] };

  const recordItems = rowsWithin(list('record'), 'recordRows', 'REDCap API records');
  if (recordItems.length === 0) return { fields, events, arms, records: [], warnings: [] };
  const parsed = parseRecordsTable(jsonTable(cellsWithin(recordItems), 'REDCap API records'), request.schema ?? { fields, events });
  return { fields, events, arms, records: valueOrThrow(parsed), warnings: parsed.warnings };
}

/** One answer as the list of objects every export is; anything else is refused naming what was answered. */
function answerList(request: RedcapApiRequest, content: RedcapContent): Array<Record<string, unknown>> {
  const { url, urlName } = request;
  const text = answerText(request.answers[content] ?? []);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export with something that is not JSON. Check that ${urlName} is the API endpoint (it usually ends in /api/).`, { url, content });
  }
  if (!Array.isArray(parsed)) {
    throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export without a list: ${redactText(errorText(text), request.secrets).slice(0, 300)}`, { url, content });
  }
  // Every export is a list of flat objects; a null or a number would fail later as a crash, not a message.
  const index = parsed.findIndex((item) => typeof item !== 'object' || item === null || Array.isArray(item));
  if (index >= 0) {
    const what = parsed[index] === null ? 'null' : Array.isArray(parsed[index]) ? 'a list' : typeof parsed[index];
    throw new ClinAgentError('UPSTREAM_FAILED', `REDCap at ${url} answered the ${content} export with a list whose item ${index + 1} is ${what}, not an object. Check that ${urlName} is the API endpoint (it usually ends in /api/).`, { url, content, item: index + 1 });
  }
  return parsed as Array<Record<string, unknown>>;
}

/** The dictionary's field and the records' row limits of a file import, for the same data from the API. */
function rowsWithin<T>(items: T[], limit: 'dictionaryFields' | 'recordRows', source: string): T[] {
  if (items.length > IMPORT_LIMITS[limit]) throw importTooLarge(limit, source);
  return items;
}

/** The records' cell limit of a file import; counted before the table is built, as a CSV file's are. */
function cellsWithin(items: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  let cells = 0;
  for (const item of items) {
    for (const key in item) if (Object.hasOwn(item, key)) cells += 1;
    if (cells > IMPORT_LIMITS.recordCells) throw importTooLarge('recordCells', 'REDCap API records');
  }
  return items;
}
