import type { TrialField } from '../store/types.js';
import { DICTIONARY_TABLE_LIMITS, readCsvTable, type Table } from './csv-table.js';
import { quote, valueOrThrow, type ImportProblem, type Parsed } from './problems.js';
import { fieldTypeOf, IMPLICIT_CHOICES, parseChoices, REDCAP_FIELD_TYPES } from './redcap-field-type.js';
import { boundOf, isValidBound } from './validate-value.js';

/**
 * REDCap's data-dictionary CSV headers and the API's metadata keys for the same columns. The parser works
 * on API keys, so a dictionary downloaded from the UI, exported through the API as CSV, or fetched as JSON
 * all go through one path. Columns not listed (matrix groups, annotations...) are ignored.
 */
const CSV_HEADER_TO_KEY: Record<string, string> = {
  'Variable / Field Name': 'field_name',
  'Form Name': 'form_name',
  'Section Header': 'section_header',
  'Field Type': 'field_type',
  'Field Label': 'field_label',
  'Choices, Calculations, OR Slider Labels': 'select_choices_or_calculations',
  'Field Note': 'field_note',
  'Text Validation Type OR Show Slider Number': 'text_validation_type_or_show_slider_number',
  'Text Validation Min': 'text_validation_min',
  'Text Validation Max': 'text_validation_max',
  'Identifier?': 'identifier',
  'Branching Logic (Show field only if...)': 'branching_logic',
  'Required Field?': 'required_field',
};
const REQUIRED_KEYS = ['field_name', 'form_name', 'field_type', 'field_label'] as const;
const KEY_TO_CSV_HEADER = Object.fromEntries(Object.entries(CSV_HEADER_TO_KEY).map(([header, key]) => [key, header]));

// REDCap's own rule for variable names; QC rules and JSON Logic paths rely on it too.
const FIELD_NAME = /^[a-z][a-z0-9_]*$/;
const CHOICE_TYPES = new Set(['dropdown', 'radio', 'checkbox']);
// "Required Field?" and "Identifier?" cells: REDCap writes "y" or nothing; hand-edited sheets say yes/no or 1/0.
const YES = new Set(['y', 'yes', '1']);
const YES_NO = new Set(['', ...YES, 'n', 'no', '0']);

export function parseDictionaryCsv(text: string, source = 'dictionary.csv'): TrialField[] {
  return valueOrThrow(parseDictionaryText(text, source));
}

export function parseDictionaryText(text: string, source = 'dictionary.csv'): Parsed<TrialField[]> {
  const table = readCsvTable(text, source, DICTIONARY_TABLE_LIMITS);
  if (table.value.header.length === 0) return { value: [], problems: table.problems };
  const parsed = parseDictionaryTable(table.value);
  return { value: parsed.value, problems: [...table.problems, ...parsed.problems] };
}

/** Fields in dictionary order, descriptive fields left out; every problem of every row is reported. */
export function parseDictionaryTable(table: Table): Parsed<TrialField[]> {
  const { source } = table;
  const problems: ImportProblem[] = [];
  const keyOf = (column: string) => CSV_HEADER_TO_KEY[column] ?? column;
  const keys = new Set(table.header.map(keyOf));
  const missing = REQUIRED_KEYS.filter((key) => !keys.has(key));
  if (missing.length > 0) {
    for (const key of missing) {
      problems.push({ source, line: 1, field: KEY_TO_CSV_HEADER[key] ?? key, value: '', problem: `the column "${KEY_TO_CSV_HEADER[key]}" is missing; export the data dictionary from REDCap (Project Setup > Data Dictionary) without removing columns` });
    }
    return { value: [], problems };
  }

  const columnOf = new Map(table.header.map((column) => [keyOf(column), column]));
  const fields: TrialField[] = [];
  const lineOfField = new Map<string, number>();
  for (const row of table.rows) {
    const cell = (key: string) => (row.values[columnOf.get(key) ?? ''] ?? '').trim();
    const report = (key: string, value: string, problem: string) => problems.push({ source, line: row.line, field: KEY_TO_CSV_HEADER[key] ?? key, value, problem });
    const rowProblemsBefore = problems.length;

    const fieldName = cell('field_name');
    if (!fieldName) report('field_name', '', 'the variable name is empty');
    else if (!FIELD_NAME.test(fieldName)) report('field_name', fieldName, `${quote(fieldName)} is not a valid variable name (lowercase letters, digits and _, starting with a letter)`);
    else if (lineOfField.has(fieldName)) report('field_name', fieldName, `${quote(fieldName)} is already defined on line ${lineOfField.get(fieldName)}; variable names must be unique`);
    else lineOfField.set(fieldName, row.line);

    const formName = cell('form_name');
    if (!formName) report('form_name', '', 'the form name is empty');

    const redcapType = cell('field_type');
    const validation = cell('text_validation_type_or_show_slider_number');
    const fieldType = fieldTypeOf(redcapType, validation);
    if (fieldType === 'skip') continue;
    if (fieldType === undefined) {
      report('field_type', redcapType, `${quote(redcapType)} is not a REDCap field type (${REDCAP_FIELD_TYPES.join(', ')})`);
      continue;
    }

    let choices = IMPLICIT_CHOICES[fieldType] ?? [];
    if (CHOICE_TYPES.has(fieldType)) {
      const parsed = parseChoices(cell('select_choices_or_calculations'));
      for (const problem of parsed.problems) report('select_choices_or_calculations', cell('select_choices_or_calculations'), problem);
      choices = parsed.choices;
    }

    const isSlider = redcapType === 'slider';
    const validationMin = cell('text_validation_min') || (isSlider ? '0' : '');
    const validationMax = cell('text_validation_max') || (isSlider ? '100' : '');
    for (const [key, bound] of [['text_validation_min', validationMin], ['text_validation_max', validationMax]] as const) {
      if (bound && !isValidBound(fieldType, bound)) report(key, bound, `${quote(bound)} is not a valid bound for a ${fieldType} field`);
    }
    const min = boundOf(fieldType, validationMin);
    const max = boundOf(fieldType, validationMax);
    if (min !== undefined && max !== undefined && min > max) report('text_validation_min', validationMin, `the minimum ${quote(validationMin)} is above the maximum ${quote(validationMax)}`);

    const requiredText = cell('required_field').toLowerCase();
    if (!YES_NO.has(requiredText)) report('required_field', cell('required_field'), `${quote(cell('required_field'))} is not "y" or blank`);
    // REDCap writes "y" or leaves the cell blank; the API sends the same. Anything else is a typo to fix,
    // since guessing wrong would either hide data from QC or send an identifier to a model.
    const identifierText = cell('identifier').toLowerCase();
    if (!YES_NO.has(identifierText)) report('identifier', cell('identifier'), `${quote(cell('identifier'))} is not "y" or blank; write "y" for an identifier (name, phone, address, date of birth...) and leave it blank otherwise`);

    if (problems.length > rowProblemsBefore) continue;
    fields.push({
      fieldName,
      formName,
      fieldType,
      label: cell('field_label'),
      choices,
      validationMin: validationMin || null,
      validationMax: validationMax || null,
      required: YES.has(requiredText),
      identifier: YES.has(identifierText),
    });
  }
  if (table.rows.length > 0 && fields.length === 0 && problems.length === 0) {
    problems.push({ source, line: 2, field: '(file)', value: '', problem: 'the dictionary defines no fields' });
  }
  if (table.rows.length === 0) problems.push({ source, line: 2, field: '(file)', value: '', problem: 'the dictionary has a header but no fields' });
  return { value: fields, problems };
}
