import { describe, expect, it } from 'vitest';
import { compileRedcapLogic } from './index.js';
import { dataQualityRule } from './test-helpers.js';

const age = { var: 'age' };
const ageText = { cat: [{ var: ['age', ''] }] };

describe('compileRedcapLogic: references and comparisons', () => {
  it('[age] < 18 compares numerically when the value is a number, as text otherwise', () => {
    expect(compileRedcapLogic('[age] < 18')).toEqual({ if: [{ is_number: age }, { '<': [{ '+': [age] }, 18] }, { '<': [ageText, '18'] }] });
    const rule = dataQualityRule('[age] < 18');
    expect(rule.fires({ age: 16 })).toBe(true);
    expect(rule.fires({ age: '9' })).toBe(true); // 9 < 18 as numbers, though "9" > "18" as text
    expect(rule.fires({ age: 18 })).toBe(false);
    expect(rule.fires({ age: 45 })).toBe(false);
  });

  it('[age] < 18 is true on a blank age, as in REDCap (guard it with [age] <> "")', () => {
    expect(dataQualityRule('[age] < 18').fires({ age: null })).toBe(true);
    const guarded = dataQualityRule("[age] <> '' and [age] < 18");
    expect(compileRedcapLogic("[age] <> '' and [age] < 18")).toEqual({
      and: [{ '!': { '!!': { missing: ['age'] } } }, { if: [{ is_number: age }, { '<': [{ '+': [age] }, 18] }, { '<': [ageText, '18'] }] }],
    });
    expect(guarded.fires({ age: null })).toBe(false);
    expect(guarded.fires({})).toBe(false);
    expect(guarded.fires({ age: 17 })).toBe(true);
  });

  it('event-qualified references read the event nested under its name', () => {
    const logic = '[enrollment_arm_1][consent_date] > [enrollment_arm_1][enr_date]';
    const consent = { var: 'enrollment_arm_1.consent_date' };
    const enrolled = { var: 'enrollment_arm_1.enr_date' };
    expect(compileRedcapLogic(logic)).toEqual({
      if: [
        { and: [{ is_number: consent }, { is_number: enrolled }] },
        { '>': [{ '+': [consent] }, { '+': [enrolled] }] },
        { '>': [{ cat: [{ var: ['enrollment_arm_1.consent_date', ''] }] }, { cat: [{ var: ['enrollment_arm_1.enr_date', ''] }] }] },
      ],
    });
    const rule = dataQualityRule(logic);
    expect(rule.fires({ enrollment_arm_1: { consent_date: '2024-03-02', enr_date: '2024-03-01' } })).toBe(true);
    expect(rule.fires({ enrollment_arm_1: { consent_date: '2024-02-28', enr_date: '2024-03-01' } })).toBe(false);
    expect(rule.fires({ enrollment_arm_1: { consent_date: '2024-03-01', enr_date: '2024-03-01' } })).toBe(false);
  });

  it('checkbox [gym(1)] reads the exported column gym___1', () => {
    expect(compileRedcapLogic("[gym(1)] = '1'")).toEqual({
      if: [{ is_number: { var: 'gym___1' } }, { '===': [{ '+': [{ var: 'gym___1' }] }, 1] }, { '===': [{ cat: [{ var: ['gym___1', ''] }] }, '1'] }],
    });
    expect(compileRedcapLogic('[visit_arm_1][gym(-1)] = "1"')).toEqual({
      if: [
        { is_number: { var: 'visit_arm_1.gym___m1' } },
        { '===': [{ '+': [{ var: 'visit_arm_1.gym___m1' }] }, 1] },
        { '===': [{ cat: [{ var: ['visit_arm_1.gym___m1', ''] }] }, '1'] },
      ],
    });
    const rule = dataQualityRule("[gym(1)] = '1'");
    expect(rule.fires({ gym___1: '1', gym___2: '0' })).toBe(true);
    expect(rule.fires({ gym___1: '0', gym___2: '1' })).toBe(false);
  });

  it("= '' and <> '' test for a blank field with the engine's missing operator", () => {
    expect(compileRedcapLogic("[weight] = ''")).toEqual({ '!!': { missing: ['weight'] } });
    expect(compileRedcapLogic('"" <> [v2_arm_1][weight]')).toEqual({ '!': { '!!': { missing: ['v2_arm_1.weight'] } } });
    const blank = dataQualityRule("[weight] = ''");
    for (const record of [{}, { weight: null }, { weight: '' }]) expect(blank.fires(record)).toBe(true);
    expect(blank.fires({ weight: 0 })).toBe(false);
    expect(blank.fires({ weight: 72.5 })).toBe(false);
  });

  it('= compares numerically when both sides are numeric, as text otherwise', () => {
    const rule = dataQualityRule('[dose] = 10');
    expect(rule.fires({ dose: 10 })).toBe(true);
    expect(rule.fires({ dose: '10.0' })).toBe(true);
    expect(rule.fires({ dose: 11 })).toBe(false);
    expect(rule.fires({ dose: 'ten' })).toBe(false);
    expect(rule.fires({ dose: null })).toBe(false);
    expect(compileRedcapLogic("[sex] = 'F'")).toEqual({ '===': [{ cat: [{ var: ['sex', ''] }] }, 'F'] });
    const text = dataQualityRule("[sex] = 'F'");
    expect(text.fires({ sex: 'F' })).toBe(true);
    expect(text.fires({ sex: 'f' })).toBe(false);
  });

  it('<> and != are the same test', () => {
    const expected = { if: [{ is_number: { var: 'arm' } }, { '!==': [{ '+': [{ var: 'arm' }] }, 2] }, { '!==': [{ cat: [{ var: ['arm', ''] }] }, '2'] }] };
    expect(compileRedcapLogic('[arm] <> 2')).toEqual(expected);
    expect(compileRedcapLogic('[arm] != 2')).toEqual(expected);
    const rule = dataQualityRule('[arm] <> 2');
    expect(rule.fires({ arm: '1' })).toBe(true);
    expect(rule.fires({ arm: '2' })).toBe(false);
  });

  it.each([
    ['<=', { height: 150 }, { height: 151 }],
    ['>', { height: 151 }, { height: 150 }],
    ['>=', { height: 150 }, { height: 149.5 }],
  ])('%s compares numbers', (operator, firing, quiet) => {
    expect(compileRedcapLogic(`[height] ${operator} 150`)).toEqual({
      if: [{ is_number: { var: 'height' } }, { [operator]: [{ '+': [{ var: 'height' }] }, 150] }, { [operator]: [{ cat: [{ var: ['height', ''] }] }, '150'] }],
    });
    const rule = dataQualityRule(`[height] ${operator} 150`);
    expect(rule.fires(firing)).toBe(true);
    expect(rule.fires(quiet)).toBe(false);
  });

  it('two literals are compared at the kind they have', () => {
    expect(compileRedcapLogic('2 < 10')).toEqual({ '<': [2, 10] });
    expect(compileRedcapLogic("'b' > 'a'")).toEqual({ '>': ['b', 'a'] });
    expect(compileRedcapLogic("'10' > 9")).toEqual({ '>': [10, 9] });
  });
});

describe('compileRedcapLogic: arithmetic and logic', () => {
  it('+ - * / with REDCap precedence; an operation is evaluated once, then compared', () => {
    const bmi = { '/': [{ var: 'weight' }, { '*': [{ var: 'height' }, { var: 'height' }] }] };
    expect(compileRedcapLogic('[weight] / ([height] * [height]) > 30')).toEqual({ '>': [bmi, 30] });
    const rule = dataQualityRule('[weight] / ([height] * [height]) > 30');
    expect(rule.fires({ weight: 100, height: 1.7 })).toBe(true);
    expect(rule.fires({ weight: 70, height: 1.7 })).toBe(false);

    expect(compileRedcapLogic('[a] + [b] - 2 * [c] = -[d]')).toEqual({
      '===': [{ '-': [{ '+': [{ var: 'a' }, { var: 'b' }] }, { '*': [2, { var: 'c' }] }] }, { '-': [{ var: 'd' }] }],
    });
    const sums = dataQualityRule('[a] + [b] - 2 * [c] = -[d]');
    expect(sums.fires({ a: 1, b: 2, c: 3, d: 3 })).toBe(true);
    expect(sums.fires({ a: 1, b: 2, c: 3, d: 4 })).toBe(false);
  });

  it('an operation compared with a field binds both with pipe, then compares by kind', () => {
    const logic = compileRedcapLogic('[total] <> [a] + [b]');
    expect(logic).toEqual({
      pipe: [
        [{ var: 'total' }, { '+': [{ var: 'a' }, { var: 'b' }] }],
        { if: [{ is_number: { var: '0' } }, { '!==': [{ '+': [{ var: '0' }] }, { var: '1' }] }, { '!==': [{ cat: [{ '??': [{ var: '0' }, ''] }] }, { cat: [{ '??': [{ var: '1' }, ''] }] }] }] },
      ],
    });
    const rule = dataQualityRule('[total] <> [a] + [b]');
    expect(rule.fires({ total: 5, a: 2, b: 2 })).toBe(true);
    expect(rule.fires({ total: '4', a: 2, b: 2 })).toBe(false);
    expect(rule.fires({ total: null, a: 2, b: 2 })).toBe(true);
  });

  it('and / or / not, with not binding tighter than and, and REDCap truth for a bare value', () => {
    expect(compileRedcapLogic("[a] = 1 or [b] = 1 and not [c] = ''")).toEqual({
      or: [
        { if: [{ is_number: { var: 'a' } }, { '===': [{ '+': [{ var: 'a' }] }, 1] }, { '===': [{ cat: [{ var: ['a', ''] }] }, '1'] }] },
        { and: [{ if: [{ is_number: { var: 'b' } }, { '===': [{ '+': [{ var: 'b' }] }, 1] }, { '===': [{ cat: [{ var: ['b', ''] }] }, '1'] }] }, { '!': { '!!': { missing: ['c'] } } }] },
      ],
    });
    const rule = dataQualityRule("[a] = 1 or [b] = 1 and not [c] = ''");
    expect(rule.fires({ a: 1, b: 0, c: null })).toBe(true);
    expect(rule.fires({ a: 0, b: 1, c: 'x' })).toBe(true);
    expect(rule.fires({ a: 0, b: 1, c: null })).toBe(false);
    expect(rule.fires({ a: 0, b: 0, c: 'x' })).toBe(false);

    expect(compileRedcapLogic('not [gym(2)] AND [gym(3)]')).toEqual({
      and: [{ '!': { '!': { in: [{ var: 'gym___2' }, ['', '0', 0, null, false]] } } }, { '!': { in: [{ var: 'gym___3' }, ['', '0', 0, null, false]] } }],
    });
    const bare = dataQualityRule('not [gym(2)] AND [gym(3)]');
    expect(bare.fires({ gym___2: '0', gym___3: '1' })).toBe(true);
    expect(bare.fires({ gym___2: '1', gym___3: '1' })).toBe(false);
    expect(bare.fires({ gym___2: '0', gym___3: '0' })).toBe(false);
  });
});
