import type { RecordValue, TrialEvent, TrialField, TrialRecord } from '../store/types.js';
import { readCsvTable, RECORD_TABLE_LIMITS, type Table } from './csv-table.js';
import { quote, valueOrThrow, type ImportProblem, type ImportWarning, type Parsed } from './problems.js';
import { validateValue, type CellCheck } from './validate-value.js';

export interface TrialSchema {
  /** The data dictionary; its first field is the record id, as in every REDCap project. */
  fields: ReadonlyArray<TrialField>;
  /** The visit schedule; empty for a classic (non-longitudinal) project. */
  events: ReadonlyArray<TrialEvent>;
}

const EVENT_COLUMN = 'redcap_event_name';
const SITE_COLUMN = 'redcap_data_access_group';
const REPEAT_COLUMNS = ['redcap_repeat_instrument', 'redcap_repeat_instance'];
const IGNORED_COLUMNS = new Set(['redcap_survey_identifier']);

/** How one column of the export is checked; the record id, event and site columns are handled apart. */
type ColumnCheck = { kind: 'field'; field: TrialField } | { kind: 'values'; allowed: string[]; meaning: string } | { kind: 'text' } | { kind: 'ignored' };

export function parseRecordsCsv(text: string, schema: TrialSchema, source = 'records.csv'): TrialRecord[] {
  return valueOrThrow(parseRecordsText(text, schema, source));
}

/** Records with the values kept despite being outside their validation bounds. */
type ParsedRecords = Parsed<TrialRecord[]> & { warnings: ImportWarning[] };

export function parseRecordsText(text: string, schema: TrialSchema, source = 'records.csv'): ParsedRecords {
  const table = readCsvTable(text, source, RECORD_TABLE_LIMITS);
  if (table.value.header.length === 0) return { value: [], problems: table.problems, warnings: [] };
  const parsed = parseRecordsTable(table.value, schema);
  return { value: parsed.value, problems: [...table.problems, ...parsed.problems], warnings: parsed.warnings };
}

/**
 * Checks every cell of REDCap's flat export (one row per record and event) against the dictionary and the
 * schedule, and reports all problems at once. Blank required fields are not problems: finding missing data
 * is QC's job, and refusing the file would hide exactly what QC should report.
 */
export function parseRecordsTable(table: Table, schema: TrialSchema): ParsedRecords {
  const { source } = table;
  const problems: ImportProblem[] = [];
  const warnings: ImportWarning[] = [];
  const recordIdField = schema.fields[0]?.fieldName;
  if (!recordIdField) {
    problems.push({ source, line: 1, field: '(file)', value: '', problem: 'the data dictionary has no fields, so records cannot be checked; import the dictionary first' });
    return { value: [], problems, warnings };
  }
  if (!table.header.includes(recordIdField)) {
    problems.push({ source, line: 1, field: recordIdField, value: '', problem: `the record id column "${recordIdField}" (the dictionary's first field) is missing; export records with raw variable names as headers` });
    return { value: [], problems, warnings };
  }

  const known = columnChecks(schema.fields);
  const checks = new Map<string, ColumnCheck>();
  for (const column of table.header) {
    if (column === recordIdField || column === EVENT_COLUMN || column === SITE_COLUMN || REPEAT_COLUMNS.includes(column)) continue;
    const check = known.get(column);
    if (check) checks.set(column, check);
    else problems.push({ source, line: 1, field: column, value: column, problem: `column ${quote(column)} is not in the data dictionary; import the dictionary that matches this export, or remove the column` });
  }
  const hasEventColumn = table.header.includes(EVENT_COLUMN);
  if (!hasEventColumn && schema.events.length > 0) {
    problems.push({ source, line: 1, field: EVENT_COLUMN, value: '', problem: `the column "${EVENT_COLUMN}" is missing, but the project has events; export from the longitudinal project so each row names its event` });
  }
  const eventNames = new Set(schema.events.map((event) => event.eventName));
  const eventList = schema.events.map((event) => event.eventName).join(', ');

  const records: TrialRecord[] = [];
  const lineOfRow = new Map<string, number>();
  for (const row of table.rows) {
    const report = (field: string, value: string, problem: string) => problems.push({ source, line: row.line, field, value, problem });
    const before = problems.length;

    const recordId = (row.values[recordIdField] ?? '').trim();
    if (!recordId) report(recordIdField, '', 'the record id is empty; every row needs the subject\'s record id');

    const eventName = hasEventColumn ? (row.values[EVENT_COLUMN] ?? '').trim() : '';
    if (hasEventColumn) {
      if (!eventName) report(EVENT_COLUMN, '', 'the event name is empty');
      else if (!eventNames.has(eventName)) {
        report(EVENT_COLUMN, eventName, schema.events.length > 0 ? `${quote(eventName)} is not an event of the project (${eventList})` : `${quote(eventName)} is not an event of the project; the project has no events, so import the events definition first`);
      }
    }

    for (const column of REPEAT_COLUMNS) {
      const value = (row.values[column] ?? '').trim();
      if (value) report(column, value, 'repeating instruments and events are not supported yet; export without them, or one row per record and event');
    }

    if (recordId) {
      const key = JSON.stringify([recordId, eventName]);
      const firstLine = lineOfRow.get(key);
      if (firstLine !== undefined) report(recordIdField, recordId, `record ${quote(recordId)}${eventName ? ` at event ${quote(eventName)}` : ''} already appears on line ${firstLine}; each record and event must be one row`);
      else lineOfRow.set(key, row.line);
    }

    const data: Record<string, RecordValue> = {};
    const rowWarnings: ImportWarning[] = [];
    for (const [column, check] of checks) {
      const raw = row.values[column] ?? '';
      const result = checkCell(check, raw);
      if ('problem' in result) report(column, raw, result.problem);
      else if (check.kind !== 'ignored') data[column] = result.value;
      if ('outOfRange' in result && result.outOfRange && result.value !== null && check.kind === 'field') {
        const { side, bound } = result.outOfRange;
        const shown = typeof result.value === 'number' ? String(result.value) : result.value;
        rowWarnings.push({
          line: row.line,
          recordId,
          event: eventName,
          field: column,
          value: result.value,
          min: check.field.validationMin,
          max: check.field.validationMax,
          message: `${source} line ${row.line}, field ${column}: ${shown} is ${side} the validation ${side === 'below' ? 'minimum' : 'maximum'} ${bound}; imported, QC will report it`,
        });
      }
    }

    if (problems.length > before) continue;
    warnings.push(...rowWarnings);
    records.push({ recordId, eventName, site: (row.values[SITE_COLUMN] ?? '').trim(), data });
  }
  return { value: records, problems, warnings };
}

/**
 * The columns a REDCap export may have for this dictionary: one per field, one per choice of a checkbox
 * field ("symptoms___2"), a "<form>_complete" status per form, and "<form>_timestamp" for survey forms.
 */
function columnChecks(fields: ReadonlyArray<TrialField>): Map<string, ColumnCheck> {
  const checks = new Map<string, ColumnCheck>();
  for (const column of IGNORED_COLUMNS) checks.set(column, { kind: 'ignored' });
  for (const field of fields.slice(1)) {
    if (field.fieldType !== 'checkbox') {
      checks.set(field.fieldName, { kind: 'field', field });
      continue;
    }
    for (const choice of field.choices) {
      // REDCap lowercases the code and turns characters outside [a-z0-9_] into "_" (a code "-1" gives "___m1"
      // in some versions), so the common spellings are accepted.
      const code = choice.code.toLowerCase();
      for (const spelling of new Set([code, code.replace(/^-/, 'm'), code.replace(/[^a-z0-9_]/g, '_')])) {
        checks.set(`${field.fieldName}___${spelling}`, { kind: 'values', allowed: ['0', '1'], meaning: 'unchecked or checked' });
      }
    }
  }
  for (const form of new Set(fields.map((field) => field.formName))) {
    checks.set(`${form}_complete`, { kind: 'values', allowed: ['0', '1', '2'], meaning: 'incomplete, unverified or complete' });
    checks.set(`${form}_timestamp`, { kind: 'text' });
  }
  return checks;
}

function checkCell(check: ColumnCheck, raw: string): CellCheck {
  const text = raw.trim();
  switch (check.kind) {
    case 'field':
      return validateValue(check.field, raw);
    case 'values':
      if (text === '') return { value: null };
      return check.allowed.includes(text) ? { value: text } : { problem: `${quote(text)} is not one of ${check.allowed.join(', ')} (${check.meaning})` };
    case 'text':
    case 'ignored':
      return { value: text === '' ? null : text };
  }
}
