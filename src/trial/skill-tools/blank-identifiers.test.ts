import { describe, expect, it } from 'vitest';
import { baseFieldName } from '../identifiers.js';
import type { RecordContext } from '../sop/record-context.js';
import { withIdentifiersBlank } from './blank-identifiers.js';

const identifiers = new Set(['phone', 'contact']);
const isIdentifier = (field: string) => identifiers.has(baseFieldName(field));

describe('a record with its identifier values blank (the second line behind identifier-rule-access.ts)', () => {
  it('blanks identifiers at the top level and in every event, checkbox columns included, and nothing else', () => {
    const record: RecordContext = {
      recordId: 'S1',
      site: 'a',
      data: { record_id: 'S1', phone: '3331234567', contact___1: '1', age: 40, v1_arm_1: { phone: '3331234567', age: 40 }, v2_arm_1: { sbp: 120 } },
      modelView: {},
      versions: {},
      events: ['v1_arm_1', 'v2_arm_1'],
      identifierValues: ['3331234567'],
    };
    const blank = withIdentifiersBlank(record, isIdentifier);
    expect({ ...blank.data, v1_arm_1: { ...(blank.data.v1_arm_1 as object) }, v2_arm_1: { ...(blank.data.v2_arm_1 as object) } }).toEqual({
      record_id: 'S1', phone: null, contact___1: null, age: 40, v1_arm_1: { phone: null, age: 40 }, v2_arm_1: { sbp: 120 },
    });
    expect(Object.getPrototypeOf(blank.data)).toBeNull();
    expect(blank.identifierValues).toEqual([]);
    // The record it was given is left as it was.
    expect(record.data.phone).toBe('3331234567');
  });
});
