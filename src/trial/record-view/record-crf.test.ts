import { describe, expect, it } from 'vitest';
import type { DictionaryField, StoredRecord } from '../store/types.js';
import { buildRecordCrf, formLabel } from './record-crf.js';

const field = (fieldName: string, formName: string, extra: Partial<DictionaryField> = {}): DictionaryField => ({ fieldName, formName, fieldType: 'text', label: fieldName, choices: [], validationMin: null, validationMax: null, required: false, identifier: false, ...extra });
const row = (eventName: string, data: StoredRecord['data']): StoredRecord => ({ recordId: 'R1', eventName, site: '', data, version: 2, updatedAt: '2025-01-01T00:00:00.000Z' });

describe('buildRecordCrf', () => {
  const dictionary = [
    field('record_id', 'intake'),
    field('pain', 'intake', { fieldType: 'checkbox', choices: [{ code: 'A', label: 'Aching' }, { code: '-1', label: 'Unknown' }] }),
    field('age', 'intake', { fieldType: 'integer' }),
  ];

  it('folds checkbox columns in any REDCap spelling of their codes, keeps form status out of the fields, and shows undefined columns in a last form', () => {
    const crf = buildRecordCrf({ dictionary, schedule: [], arms: [], queries: [], rows: [row('', { pain___a: '1', pain___m1: '1', age: 40, intake_complete: '2', legacy_flag: 'y' })] })!;
    expect(crf.values['']).toEqual({ pain: ['A', '-1'], age: 40, intake_complete: '2', legacy_flag: 'y' });
    expect(crf.forms.map((form) => [form.name, form.fields.map((f) => f.name)])).toEqual([['intake', ['pain', 'age']], ['', ['legacy_flag']]]);
  });

  it('appends a visit the schedule does not know after the scheduled ones, labelled by its name', () => {
    const schedule = [{ eventName: 'v1_arm_1', label: 'Visit 1', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 }];
    const crf = buildRecordCrf({ dictionary, schedule, arms: [{ armNum: 1, name: 'A' }], queries: [{ id: 'q', eventName: '', field: 'extra_visit.age' }], rows: [row('v1_arm_1', { age: 1 }), row('extra_visit', { age: 2 })] })!;
    expect(crf.events.map((e) => [e.eventName, e.label, e.armName])).toEqual([['v1_arm_1', 'Visit 1', 'A'], ['extra_visit', 'extra_visit', null]]);
    expect(crf.queryCells).toEqual([{ eventName: 'extra_visit', field: 'age', queryIds: ['q'] }]);
  });

  it('marks a query without an event on each visit where its field has a value', () => {
    const schedule = ['v1', 'v2', 'v3'].map((eventName) => ({ eventName, label: eventName, dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 }));
    const crf = buildRecordCrf({ dictionary, schedule, arms: [], queries: [{ id: 'q', eventName: '', field: 'age' }], rows: [row('v1', { age: null }), row('v2', { age: 5 }), row('v3', { age: 6 })] })!;
    expect(crf.queryCells.map((cell) => cell.eventName)).toEqual(['v2', 'v3']);
  });

  it('is null without a dictionary, and names forms readably', () => {
    expect(buildRecordCrf({ dictionary: [], schedule: [], arms: [], queries: [], rows: [row('', { age: 1 })] })).toBeNull();
    expect(formLabel('vital_signs')).toBe('Vital signs');
  });
});
