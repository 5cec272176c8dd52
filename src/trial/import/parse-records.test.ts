import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { parseDictionaryCsv } from './parse-dictionary.js';
import { parseEventsCsv } from './parse-events.js';
import { parseRecordsCsv, parseRecordsText, type TrialSchema } from './parse-records.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

const schema: TrialSchema = {
  fields: parseDictionaryCsv(readTrialTestFile('redcap-dictionary.csv')),
  events: parseEventsCsv(readTrialTestFile('redcap-events.csv')),
};

describe('parseRecordsCsv', () => {
  it('reads a flat REDCap export: typed values, blanks as null, data access group as site', () => {
    const records = parseRecordsCsv(readTrialTestFile('redcap-records.csv'), schema);

    expect(records.map((record) => [record.recordId, record.eventName, record.site])).toEqual([
      ['S001', 'v1_arm_1', 'site_01'],
      ['S001', 'v2_arm_1', 'site_01'],
      ['S002', 'v1_arm_1', 'site_02'],
      ['S002', 'v2_arm_1', 'site_02'],
    ]);
    expect(records[0]?.data).toMatchObject({
      consent_date: '2025-03-01',
      age: 45,
      sex: '1',
      symptoms___1: '1',
      symptoms___3: '1',
      bmi: 24.2,
      notes: '第一行 line one\r\nline two, with "quotes"',
      enrolment_complete: '2',
      sbp: 150,
      weight_kg: 72.5,
      ae_start: null,
    });
    expect(records[1]?.data).toMatchObject({ age: null, ae_occurred: '1', ae_start: '2025-03-20 08:30', weight_kg: 72 });
    // The record id, event and group columns are the row's key, not data.
    expect(Object.keys(records[0]!.data)).not.toContain('record_id');
  });

  it('treats blank required fields as data for QC, not as import problems', () => {
    const records = parseRecordsCsv(readTrialTestFile('redcap-records.csv'), schema);
    expect(records[2]?.data).toMatchObject({ age: null, sbp: null });
  });

  it('reports every bad cell with its spreadsheet line and column', () => {
    const { problems } = parseRecordsText(readTrialTestFile('redcap-records-bad.csv'), schema);
    const lines = problems.map((problem) => `line ${problem.line}, field ${problem.field}: ${problem.problem}`);

    expect(lines).toEqual([
      'line 1, field height_cm: column "height_cm" is not in the data dictionary; import the dictionary that matches this export, or remove the column',
      'line 2, field age: "abc" is not an integer',
      // Line 3 holds a cell with a line break; it is still one spreadsheet row.
      'line 3, field sex: "3" is not one of the choice codes 1, 2',
      'line 4, field sex: "Male" is a choice label, not a code (expected 1, 2); export raw data, not labels',
      // Line 5 is blank and skipped, but counted. Line 6 (age 130, above the maximum 120) is a warning.
      "line 7, field consent_date: \"2025-02-30\" is not a date in YYYY-MM-DD form (REDCap's raw export format)",
      'line 8, field redcap_event_name: "v9_arm_1" is not an event of the project (v1_arm_1, v2_arm_1)',
      'line 9, field record_id: record "S001" at event "v1_arm_1" already appears on line 2; each record and event must be one row',
      "line 10, field record_id: the record id is empty; every row needs the subject's record id",
      'line 11, field weight_kg: "72,5kg" is not a number',
      'line 12, field symptoms___1: "2" is not one of 0, 1 (unchecked or checked)',
      'line 13, field enrolment_complete: "5" is not one of 0, 1, 2 (incomplete, unverified or complete)',
      'line 14, field ae_start: "2025-03-20" is not a date and time in YYYY-MM-DD HH:MM form',
    ]);
    expect(problems[1]).toEqual({ source: 'records.csv', line: 2, field: 'age', value: 'abc', problem: '"abc" is not an integer' });
  });

  it('throws IMPORT_INVALID naming the first problems in the message and all of them in details', () => {
    let error: unknown;
    try {
      parseRecordsCsv(readTrialTestFile('redcap-records-bad.csv'), schema);
    } catch (caught) {
      error = caught;
    }
    expect(ClinAgentError.isInstance(error)).toBe(true);
    const clinError = error as ClinAgentError;
    expect(clinError.code).toBe('IMPORT_INVALID');
    expect(clinError.status).toBe(422);
    expect(clinError.message).toContain('records.csv line 2, field age: "abc" is not an integer');
    expect(clinError.message).toContain('nothing was imported');
    expect(clinError.details.problemCount).toBe(12);
  });

  it('keeps values outside the validation min/max, as REDCap does after its warning, and lists each one', () => {
    const { problems, warnings, value } = parseRecordsText(readTrialTestFile('redcap-records-bad.csv'), schema);
    expect(problems.some((problem) => problem.line === 6 || problem.line === 15)).toBe(false);
    expect(value.find((record) => record.recordId === 'S004')?.data.age).toBe(130);
    expect(value.find((record) => record.recordId === 'S011')?.data.visit_date).toBe('2023-12-31');
    expect(warnings).toEqual([
      { line: 6, recordId: 'S004', event: 'v1_arm_1', field: 'age', value: 130, min: '0', max: '120', message: 'records.csv line 6, field age: 130 is above the validation maximum 120; imported, QC will report it' },
      { line: 15, recordId: 'S011', event: 'v1_arm_1', field: 'visit_date', value: '2023-12-31', min: '2024-01-01', max: '2026-12-31', message: 'records.csv line 15, field visit_date: 2023-12-31 is below the validation minimum 2024-01-01; imported, QC will report it' },
    ]);
  });

  it('still refuses type errors next to a value that is only out of range', () => {
    const csv = ['record_id,redcap_event_name,age,consent_date', 'S001,v1_arm_1,17,2024-02-30', 'S002,v1_arm_1,seventeen,2024-03-01', 'S003,v1_arm_1,121,2024-03-01'].join('\n');
    const { problems, warnings } = parseRecordsText(csv, schema);
    expect(problems.map((problem) => `line ${problem.line}, field ${problem.field}: ${problem.problem}`)).toEqual([
      "line 2, field consent_date: \"2024-02-30\" is not a date in YYYY-MM-DD form (REDCap's raw export format)",
      'line 3, field age: "seventeen" is not an integer',
    ]);
    // Only rows that can be imported carry warnings.
    expect(warnings.map((warning) => [warning.line, warning.field, warning.value])).toEqual([[4, 'age', 121]]);
  });

  it('lists at most twenty problems in the message', () => {
    const rows = Array.from({ length: 30 }, (_, i) => `S${i},v1_arm_1,x${i}`);
    const csv = ['record_id,redcap_event_name,age', ...rows].join('\n');
    let message = '';
    try {
      parseRecordsCsv(csv, schema);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('line 21, field age: "x19" is not an integer');
    expect(message).not.toContain('line 22,');
    expect(message).toContain('... and 10 more');
  });

  it('reports a missing record id column, a missing event column and rows of the wrong width', () => {
    const noRecordId = parseRecordsText('subject,redcap_event_name\nS001,v1_arm_1\n', schema);
    expect(noRecordId.problems[0]).toMatchObject({ line: 1, field: 'record_id' });

    const noEvent = parseRecordsText('record_id,age\nS001,40\nS002,41,extra\n', schema);
    expect(noEvent.problems.map((problem) => [problem.line, problem.field])).toEqual([
      [3, '(row)'],
      [1, 'redcap_event_name'],
    ]);
  });

  it('reports an unclosed quote with the line it starts on', () => {
    const { problems } = parseRecordsText('record_id,redcap_event_name,notes\nS001,v1_arm_1,ok\nS002,v1_arm_1,"never closed\n', schema);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 3, field: '(file)' });
    expect(problems[0]?.problem).toContain('unclosed or stray quote');
  });

  it('refuses repeating-instrument rows, which the store cannot key yet', () => {
    const { problems } = parseRecordsText('record_id,redcap_event_name,redcap_repeat_instrument,redcap_repeat_instance,age\nS001,v1_arm_1,,,40\nS001,v1_arm_1,visit,1,\n', schema);
    expect(problems.map((problem) => problem.field)).toEqual(['redcap_repeat_instrument', 'redcap_repeat_instance', 'record_id']);
  });
});
