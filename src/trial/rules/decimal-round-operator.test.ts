import { describe, expect, it } from 'vitest';
import { compileRules } from './compile-rules.js';
import { roundDecimal } from './decimal-round-operator.js';
import { createRuleEngine } from './rule-engine.js';

describe('roundDecimal: on the decimal digits, as PHP rounds', () => {
  it('half away from zero: the PHP manual\'s round() examples and issue 32\'s 1.005', () => {
    const php: Array<[number, number, number]> = [
      [3.4, 0, 3], [3.5, 0, 4], [3.6, 0, 4], [-3.4, 0, -3], [-3.5, 0, -4], [-3.6, 0, -4],
      [1.95583, 2, 1.96], [5.045, 2, 5.05], [5.055, 2, 5.06], [1.55, 1, 1.6], [-1.55, 1, -1.6],
      [1241757, -3, 1242000], [345, -2, 300], [678, -2, 700], [345, -3, 0], [678, -3, 1000],
      // Binary arithmetic gets these wrong: 1.005 * 100 = 100.49999999999999, 0.285 * 100 = 28.499999999999996.
      [1.005, 2, 1.01], [-1.005, 2, -1.01], [0.285, 2, 0.29], [1.255, 2, 1.26], [8.325, 2, 8.33],
      [1.0049, 2, 1], [2.5, 0, 3], [-2.5, 0, -3], [0.5, 0, 1], [-0.4, 0, 0], [12, 2, 12], [1e-7, 2, 0], [1.5e21, 0, 1.5e21],
    ];
    for (const [value, places, expected] of php) expect(roundDecimal(value, places, 'half_away'), `round(${value}, ${places})`).toBe(expected);
  });

  it('up and down are PHP ceil and floor on the decimal digits (REDCap roundup, rounddown)', () => {
    expect(roundDecimal(1.21, 1, 'up')).toBe(1.3);
    expect(roundDecimal(-1.21, 1, 'up')).toBe(-1.2);
    expect(roundDecimal(1.29, 1, 'down')).toBe(1.2);
    expect(roundDecimal(-1.21, 1, 'down')).toBe(-1.3);
    // 1.1 * 100 = 110.00000000000001 in binary: a ceil on it would give 1.11.
    expect(roundDecimal(1.1, 2, 'up')).toBe(1.1);
    // 0.29 * 100 = 28.999999999999996: a floor on it would give 0.28.
    expect(roundDecimal(0.29, 2, 'down')).toBe(0.29);
    expect(roundDecimal(4, 0, 'up')).toBe(4);
  });

  it('NaN and infinities stay as they are', () => {
    expect(roundDecimal(Number.NaN, 2, 'half_away')).toBeNaN();
    expect(roundDecimal(Number.POSITIVE_INFINITY, 2, 'up')).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('the decimal_round operator in a rule', () => {
  it('runs in the engine and is checked before any data arrives', () => {
    const rules = compileRules([{ id: 'bmi', field: 'bmi', logic: { '===': [{ decimal_round: [{ '+': [{ var: 'bmi' }] }, 2, 'half_away'] }, 1.01] }, message: 'BMI', severity: 'warning' }]);
    expect(rules.run({ bmi: '1.005' })).toEqual([]);
    expect(rules.run({ bmi: '1.004' })).toHaveLength(1);
    expect(createRuleEngine().operatorNames).toContain('decimal_round');
    expect(() => compileRules([{ id: 'r', field: 'x', logic: { decimal_round: [{ var: 'x' }, { var: 'p' }, 'sideways'] }, message: 'm' }])).toThrow(
      /argument 2 .* must be a whole number of decimal places[\s\S]*argument 3 "sideways" must be "half_away", "up" or "down"/,
    );
  });
});
