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

  it('answers a long run of digits that does not match', () => {
    // A backtracking pattern would take seconds on this input (quadratic: ~5e9 steps) and time the test out; the
    // linear one takes a millisecond, which `npm run bench:rules` shows ("Linear-time inputs").
    expect(isNumeric(`${'1'.repeat(100_000)}x`)).toBe(false);
  });
});
