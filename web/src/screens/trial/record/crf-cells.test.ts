import { describe, expect, it } from 'vitest';
import type { DataQuery, RecordCrf } from '../../../api';
import { displayValue, isLiveQuery, isRowShown, queriesByCell, cellKey } from './crf-cells';

const labels = { yes: 'Yes', no: 'No', true: 'True', false: 'False' };
const sex = { type: 'radio', choices: [{ code: '1', label: 'Male' }, { code: '2', label: 'Female' }] };
const symptoms = { type: 'checkbox', choices: [{ code: '1', label: 'Headache' }, { code: '2', label: 'Dizziness' }] };

describe('displayValue', () => {
  it('shows a coded value as "Label (code)", an unknown code bare, and no value as empty', () => {
    expect(displayValue(sex, '2', labels)).toBe('Female (2)');
    expect(displayValue(sex, '9', labels)).toBe('9');
    expect(displayValue(sex, null, labels)).toBe('');
    expect(displayValue(sex, undefined, labels)).toBe('');
  });

  it('lists a checkbox as its checked labels, and yes/no fields by their meaning', () => {
    expect(displayValue(symptoms, ['1', '2'], labels)).toBe('Headache; Dizziness');
    expect(displayValue(symptoms, [], labels)).toBe('');
    expect(displayValue({ type: 'yesno', choices: [] }, '0', labels)).toBe('No (0)');
    expect(displayValue({ type: 'truefalse', choices: [] }, '1', labels)).toBe('True (1)');
    expect(displayValue({ type: 'number', choices: [] }, 72.5, labels)).toBe('72.5');
  });
});

describe('cells and rows', () => {
  const crf: RecordCrf = {
    forms: [],
    events: [
      { eventName: 'v1', label: 'Baseline', armNum: 1, armName: null, hasData: true, site: '', version: 1, updatedAt: null },
      { eventName: 'v2', label: 'Week 4', armNum: 1, armName: null, hasData: false, site: null, version: null, updatedAt: null },
    ],
    values: { v1: { sbp: 132, notes: null, dob: null, symptoms: [] } },
    maskedFields: ['dob'],
    queryCells: [{ eventName: 'v2', field: 'notes', queryIds: ['q1', 'gone'] }],
  };
  const query = (id: string, status: DataQuery['status']) => ({ id, status }) as DataQuery;

  it('keys each cell to the view\'s queries, leaving out ids it does not hold', () => {
    const cells = queriesByCell(crf, [query('q1', 'open')]);
    expect(cells.get(cellKey('v2', 'notes'))?.map((q) => q.id)).toEqual(['q1']);
    expect(cells.size).toBe(1);
  });

  it('hides a row only when no visit has a value, it is not masked and carries no query', () => {
    const cells = queriesByCell(crf, [query('q1', 'open')]);
    expect(isRowShown(crf, 'sbp', cells)).toBe(true);
    expect(isRowShown(crf, 'dob', cells)).toBe(true);
    expect(isRowShown(crf, 'notes', cells)).toBe(true);
    expect(isRowShown(crf, 'symptoms', cells)).toBe(true);
    expect(isRowShown(crf, 'weight', cells)).toBe(false);
  });

  it('flags held, open, answered and reopened queries, not closed or cancelled ones', () => {
    expect(['held', 'open', 'answered', 'reopened', 'closed', 'cancelled'].map((status) => isLiveQuery({ status: status as DataQuery['status'] }))).toEqual([true, true, true, true, false, false]);
  });
});
