import jsonLogic from 'json-logic-js';
import { describe, expect, it } from 'vitest';
import { compileRules } from './index.js';

const rule = (logic: unknown) => compileRules([{ id: 'r', field: 'x', logic, message: 'm' }]);

describe('missing and missing_some follow the specification', () => {
  const cases: Array<[unknown, Record<string, unknown>]> = [
    [{ missing: ['a', 'b.c'] }, { a: null, b: { c: '' } }],
    [{ missing: ['a', 'b.c'] }, { a: 0, b: { c: false } }],
    [{ missing: ['a'] }, {}],
    [{ missing: 'a' }, { a: 1 }],
    [{ missing_some: [1, ['a', 'b']] }, { a: null, b: 2 }],
    [{ missing_some: [2, ['a', 'b', 'c']] }, { a: '', b: null, c: 3 }],
  ];

  it('counts absent, null and empty-string values as missing, exactly like the reference interpreter', () => {
    for (const [logic, data] of cases) {
      const expected = jsonLogic.apply(logic as never, data);
      // A rule passes when its logic is truthy: compare truthiness through the compiled rule, and the values directly.
      const violations = rule({ '!': logic }).run(data);
      expect(violations.length === 0, JSON.stringify([logic, data])).toBe((expected as unknown[]).length === 0);
    }
  });

  it('flags a blank CRF cell in a required-field rule', () => {
    const required = rule({ '!': { missing: ['v4_arm_1.dbp'] } });
    expect(required.run({ v4_arm_1: { dbp: null } })).toHaveLength(1);
    expect(required.run({ v4_arm_1: { dbp: '' } })).toHaveLength(1);
    expect(required.run({ v4_arm_1: {} })).toHaveLength(1);
    expect(required.run({ v4_arm_1: { dbp: 0 } })).toHaveLength(0);
  });
});
