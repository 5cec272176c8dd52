import type { DictionaryField, RecordValue, ScheduledEvent, StoredRecord, TrialArm } from '../store/types.js';

/*
 * The record page as a case report form. A data manager reads a subject the way the site entered it: form by
 * form, fields in the order of the data dictionary, one column per visit. The store keeps each (record, event)
 * row as jsonb, whose keys come back ordered by length, and names visits by their unique event names; this file
 * puts the dictionary's order and the schedule's labels back. Pure: the caller reads and masks the rows.
 */

interface CrfField {
  name: string;
  label: string;
  type: string;
  identifier: boolean;
  choices: Array<{ code: string; label: string }>;
}

interface CrfForm {
  name: string;
  label: string;
  fields: CrfField[];
}

interface CrfEvent {
  eventName: string;
  label: string;
  armNum: number | null;
  armName: string | null;
  hasData: boolean;
  site: string | null;
  version: number | null;
  updatedAt: string | null;
}

type CrfValue = RecordValue | string[];

export interface RecordCrf {
  forms: CrfForm[];
  events: CrfEvent[];
  values: Record<string, Record<string, CrfValue>>;
  maskedFields: string[];
  queryCells: Array<{ eventName: string; field: string; queryIds: string[] }>;
}

interface RecordCrfInput {
  dictionary: ReadonlyArray<DictionaryField>;
  schedule: ReadonlyArray<ScheduledEvent>;
  arms: ReadonlyArray<TrialArm>;
  /** The record's rows, already masked for the reader (`maskedFields` lists what was hidden). */
  rows: ReadonlyArray<StoredRecord & { maskedFields?: string[] }>;
  queries: ReadonlyArray<{ id: string; eventName: string; field: string }>;
}

/** The record as a CRF, or null without a data dictionary (an old import): the page then shows the raw rows. */
export function buildRecordCrf(input: RecordCrfInput): RecordCrf | null {
  if (input.dictionary.length === 0) return null;
  const checkboxes = new Map(input.dictionary.filter((f) => f.fieldType === 'checkbox').map((f) => [f.fieldName, f]));
  const events = visitColumns(input.schedule, input.arms, input.rows);
  const values: RecordCrf['values'] = {};
  for (const row of input.rows) values[row.eventName] = foldCheckboxes(row.data, checkboxes);
  const masked = new Set(input.rows.flatMap((row) => row.maskedFields ?? []).map((field) => checkboxOf(field, checkboxes)));
  return {
    forms: formsOf(input.dictionary, input.rows, checkboxes),
    events,
    values,
    maskedFields: input.dictionary.map((f) => f.fieldName).filter((name) => masked.has(name)),
    queryCells: queryCells(input.queries, events, values, checkboxes),
  };
}

/**
 * REDCap's first dictionary field is the record id, which the page title shows and the rows do not hold. Fields
 * the data has but the dictionary lacks (a column added after the dictionary was exported) are kept in a last
 * form without a name, so no value is hidden; form status columns (`<form>_complete`, `<form>_timestamp`) are not
 * fields and stay in `values` only.
 */
function formsOf(dictionary: ReadonlyArray<DictionaryField>, rows: RecordCrfInput['rows'], checkboxes: ReadonlyMap<string, DictionaryField>): CrfForm[] {
  const forms = new Map<string, CrfForm>();
  for (const field of dictionary.slice(1)) {
    let form = forms.get(field.formName);
    if (!form) forms.set(field.formName, (form = { name: field.formName, label: formLabel(field.formName), fields: [] }));
    form.fields.push({ name: field.fieldName, label: field.label, type: field.fieldType, identifier: field.identifier, choices: field.choices });
  }
  const known = new Set(dictionary.map((f) => f.fieldName));
  const formNames = new Set(dictionary.map((f) => f.formName));
  const isFormStatus = (column: string) => /_(complete|timestamp)$/.test(column) && formNames.has(column.replace(/_(complete|timestamp)$/, ''));
  const extra = new Set<string>();
  for (const row of rows) {
    for (const column of Object.keys(row.data)) {
      const field = checkboxOf(column, checkboxes);
      if (!known.has(field) && !isFormStatus(column)) extra.add(column);
    }
  }
  const result = [...forms.values()];
  if (extra.size) result.push({ name: '', label: '', fields: [...extra].sort().map((name) => ({ name, label: '', type: 'text', identifier: false, choices: [] })) });
  return result;
}

/** `vital_signs` -> `Vital signs`: REDCap exports the form's unique name only, not its display label. */
export function formLabel(formName: string): string {
  const words = formName.replace(/_/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : formName;
}

/**
 * Visit columns in the schedule's order: every event of the arms the record has data in (a visit not yet done
 * is an empty column, as on a paper CRF), then any event the schedule does not know. A classic trial has no
 * schedule: its one row (event '') is its one column.
 */
function visitColumns(schedule: ReadonlyArray<ScheduledEvent>, arms: ReadonlyArray<TrialArm>, rows: RecordCrfInput['rows']): CrfEvent[] {
  const rowOf = new Map(rows.map((row) => [row.eventName, row]));
  const scheduled = new Map(schedule.map((event) => [event.eventName, event]));
  const recordArms = new Set(rows.flatMap((row) => scheduled.get(row.eventName)?.armNum ?? []));
  const armName = (armNum: number) => arms.find((arm) => arm.armNum === armNum)?.name ?? null;
  const column = (eventName: string, label: string, armNum: number | null): CrfEvent => {
    const row = rowOf.get(eventName);
    return { eventName, label, armNum, armName: armNum === null ? null : armName(armNum), hasData: Boolean(row), site: row?.site ?? null, version: row?.version ?? null, updatedAt: row?.updatedAt ?? null };
  };
  const columns = schedule.filter((event) => recordArms.has(event.armNum)).map((event) => column(event.eventName, event.label, event.armNum));
  for (const row of rows) if (!scheduled.has(row.eventName)) columns.push(column(row.eventName, row.eventName, null));
  return columns;
}

/** The checkbox field a choice column belongs to (`symptoms___2` -> `symptoms`); any other name unchanged. */
function checkboxOf(column: string, checkboxes: ReadonlyMap<string, DictionaryField>): string {
  const cut = column.lastIndexOf('___');
  if (cut <= 0) return column;
  const field = column.slice(0, cut);
  return checkboxes.has(field) ? field : column;
}

/**
 * A checkbox field is stored as one 0/1 column per choice; the CRF shows it as one cell listing the checked codes
 * in dictionary order (REDCap lowercases codes in column names, so they are matched without case). All columns
 * blank (a form not entered) is null; a masked identifier checkbox stays null.
 */
function foldCheckboxes(data: Record<string, RecordValue>, checkboxes: ReadonlyMap<string, DictionaryField>): Record<string, CrfValue> {
  const out: Record<string, CrfValue> = {};
  const checked = new Map<string, { codes: Set<string>; isBlank: boolean }>();
  for (const [column, value] of Object.entries(data)) {
    const field = checkboxOf(column, checkboxes);
    if (field === column) {
      out[column] = value;
      continue;
    }
    const state = checked.get(field) ?? { codes: new Set<string>(), isBlank: true };
    checked.set(field, state);
    if (value === null || value === '') continue;
    state.isBlank = false;
    if (String(value) === '1') state.codes.add(column.slice(field.length + 3).toLowerCase());
  }
  for (const [field, state] of checked) {
    const choices = checkboxes.get(field)!.choices;
    out[field] = state.isBlank ? null : choices.map((c) => c.code).filter((code) => columnSpellings(code).some((spelling) => state.codes.has(spelling)));
  }
  return out;
}

/** The ways REDCap spells a choice code in a column name (as the importer accepts them): lowercased, "-1" as "m1", other characters as "_". */
function columnSpellings(code: string): string[] {
  const lower = code.toLowerCase();
  return [lower, lower.replace(/^-/, 'm'), lower.replace(/[^a-z0-9_]/g, '_')];
}

/**
 * Which cell each query is about. Rules name a visit's field with its event (`baseline_arm_1.sbp`) and checkbox
 * choices by their column; both resolve to the dictionary field and the query's event. A query without an event
 * (a classic trial, or a rule on the whole subject) marks the field in each visit where it has a value, else in the
 * first visit with data.
 */
function queryCells(queries: RecordCrfInput['queries'], events: CrfEvent[], values: RecordCrf['values'], checkboxes: ReadonlyMap<string, DictionaryField>): RecordCrf['queryCells'] {
  const cells = new Map<string, { eventName: string; field: string; queryIds: string[] }>();
  const add = (eventName: string, field: string, id: string) => {
    const key = JSON.stringify([eventName, field]);
    const cell = cells.get(key) ?? { eventName, field, queryIds: [] };
    cells.set(key, cell);
    if (!cell.queryIds.includes(id)) cell.queryIds.push(id);
  };
  const knownEvents = new Set(events.map((e) => e.eventName));
  for (const query of queries) {
    const dot = query.field.lastIndexOf('.');
    const prefix = dot > 0 ? query.field.slice(0, dot) : '';
    const field = checkboxOf(dot > 0 ? query.field.slice(dot + 1) : query.field, checkboxes);
    const eventName = query.eventName || (knownEvents.has(prefix) ? prefix : '');
    if (eventName || knownEvents.has('')) {
      add(eventName, field, query.id);
      continue;
    }
    const withValue = events.filter((e) => hasValue(values[e.eventName]?.[field]));
    const targets = withValue.length ? withValue : events.filter((e) => e.hasData).slice(0, 1);
    for (const target of targets) add(target.eventName, field, query.id);
  }
  return [...cells.values()];
}

const hasValue = (value: CrfValue | undefined) => value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);
