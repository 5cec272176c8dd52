import { describe, expect, it } from 'vitest';
import { isNumeric } from './number-operators.js';
import { createRuleEngine } from './rule-engine.js';

describe('is_number', () => {
  it.each([0, -3, 1.5, '18', ' 18 ', '-2.5', '+7', '.5', '3.', '1e3', '2E-2'])('%j is a number', (value) => {
    expect(isNumeric(value)).toBe(true);
  });

  it.each([null, undefined, '', ' ', 'abc', '1,5', '0x10', 'Infinity', '1e', '--1', '.', true, [], {}, Number.NaN, Number.POSITIVE_INFINITY, '1e999'])(
    '%j is not a number',
    (value) => {
      expect(isNumeric(value)).toBe(false);
    },
  );

  it('runs in the engine on record values and never throws', () => {
    const rule = createRuleEngine().compile({ is_number: { var: 'age' } });
    expect(rule({ age: 42 })).toBe(true);
    expect(rule({ age: '42' })).toBe(true);
    expect(rule({ age: 'forty' })).toBe(false);
    expect(rule({ age: null })).toBe(false);
    expect(rule({})).toBe(false);
  });

  it('takes linear time on a long run of digits that does not match', () => {
    const started = performance.now();
    expect(isNumeric(`${'1'.repeat(100_000)}x`)).toBe(false);
    // A backtracking pattern would take seconds on this input (quadratic: ~5e9 steps); linear takes a millisecond.
    // The bound leaves room for a busy CI machine without letting the quadratic case through.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
