import { describe, expect, it } from 'vitest';
import { OperatorError } from './operator-error.js';
import { createRuleEngine } from './rule-engine.js';

const engine = createRuleEngine();
const evaluate = (logic: unknown, data: Record<string, unknown> = {}) => engine.compile(logic)(data);

describe('date_diff_days', () => {
  it('counts days from the first date to the second, negative when the second is earlier', () => {
    expect(evaluate({ date_diff_days: ['2025-04-09', '2025-04-11'] })).toBe(2);
    expect(evaluate({ date_diff_days: [{ var: 'b' }, { var: 'a' }] }, { a: '2025-04-09', b: '2025-04-11' })).toBe(-2);
  });

  it('counts 29 February in leap years only', () => {
    expect(evaluate({ date_diff_days: ['2024-02-28', '2024-03-01'] })).toBe(2);
    expect(evaluate({ date_diff_days: ['2023-02-28', '2023-03-01'] })).toBe(1);
    expect(evaluate({ date_diff_days: ['2024-01-01', '2025-01-01'] })).toBe(366);
  });

  it('counts calendar dates as written, ignoring the time of day and the offset', () => {
    expect(evaluate({ date_diff_days: ['2024-01-01T23:59+08:00', '2024-01-02T00:01+08:00'] })).toBe(1);
    expect(evaluate({ date_diff_days: ['2024-01-01', '2024-01-29T01:00+08:00'] })).toBe(28);
  });

  it('throws on a missing date, so a comparison on it can never pass silently', () => {
    // {"<=": [null, 0]} is true in JSON Logic: returning null here would let the rule pass.
    expect(evaluate({ '<=': [null, 0] })).toBe(true);
    expect(() => evaluate({ '<=': [{ date_diff_days: [{ var: 'consent' }, { var: 'enrolment' }] }, 0] }, { enrolment: '2025-01-01' })).toThrow(
      /date_diff_days: argument 1 is missing/,
    );
    expect(() => evaluate({ date_diff_days: ['2025-01-01', { var: 'x' }] }, { x: '' })).toThrow(OperatorError);
  });

  it('throws on an invalid date and names the value', () => {
    expect(() => evaluate({ date_diff_days: [{ var: 'x' }, '2025-01-01'] }, { x: '2023-02-29' })).toThrow(/argument 1 is not an ISO date.*"2023-02-29"/);
  });
});

describe('date comparisons', () => {
  it('compares two datetimes as instants, honouring offsets where string order is wrong', () => {
    const data = { a: '2024-03-01T01:00+08:00', b: '2024-02-29T20:00Z' };
    expect(data.a > data.b).toBe(true); // string comparison says a is later...
    expect(evaluate({ date_before: [{ var: 'a' }, { var: 'b' }] }, data)).toBe(true); // ...but it is 17:00Z on 29 Feb
    expect(evaluate({ date_after: [{ var: 'a' }, { var: 'b' }] }, data)).toBe(false);
  });

  it('compares by calendar date when either side is a plain date', () => {
    expect(evaluate({ date_on_or_before: ['2024-01-01T23:00+08:00', '2024-01-01'] })).toBe(true);
    expect(evaluate({ date_before: ['2024-01-01T23:00+08:00', '2024-01-01'] })).toBe(false);
    expect(evaluate({ date_on_or_after: ['2024-01-01', '2024-01-01T00:00Z'] })).toBe(true);
  });

  it('treats equal dates as on-or-before and on-or-after but neither before nor after', () => {
    const same = ['2024-02-29', '2024-02-29'];
    expect([evaluate({ date_before: same }), evaluate({ date_after: same })]).toEqual([false, false]);
    expect([evaluate({ date_on_or_before: same }), evaluate({ date_on_or_after: same })]).toEqual([true, true]);
  });

  it('throws on a missing date rather than answering false, which a negation would turn into a pass', () => {
    expect(() => evaluate({ '!': { date_before: [{ var: 'ae_onset' }, { var: 'consent' }] } }, { consent: '2024-01-01' })).toThrow(/date_before: argument 1 is missing/);
  });

  it('lets a rule allow an absent date explicitly with "or"', () => {
    const logic = { or: [{ '!': { var: 'end' } }, { date_on_or_after: [{ var: 'end' }, { var: 'start' }] }] };
    expect(evaluate(logic, { start: '2024-01-01' })).toBe(true);
    expect(evaluate(logic, { start: '2024-01-02', end: '2024-01-01' })).toBe(false);
  });
});

describe('is_date', () => {
  it('is true for valid ISO dates and datetimes and false for anything else, never throwing', () => {
    expect(evaluate({ is_date: { var: 'd' } }, { d: '2024-02-29' })).toBe(true);
    expect(evaluate({ is_date: { var: 'd' } }, { d: '2024-02-29T08:00:00.000+08:00' })).toBe(true);
    expect(evaluate({ is_date: { var: 'd' } }, { d: '2023-02-29' })).toBe(false);
    expect(evaluate({ is_date: { var: 'd' } }, {})).toBe(false);
    expect(evaluate({ is_date: [{ var: 'd' }] }, { d: 'yesterday' })).toBe(false);
  });
});
