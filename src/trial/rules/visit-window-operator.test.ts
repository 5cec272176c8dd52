import { describe, expect, it } from 'vitest';
import { createRuleEngine } from './rule-engine.js';

const engine = createRuleEngine();
// The demo trial's V2: day 28 ± 3 from enrolment (enrolment is day 0).
const v2InWindow = engine.compile({ in_window: [{ var: 'visit2_date' }, { var: 'enrollment_date' }, 28, 3, 3] });

describe('in_window', () => {
  it('accepts visits from target - before to target + after, inclusive', () => {
    const at = (visit2_date: string) => v2InWindow({ enrollment_date: '2025-04-11', visit2_date });
    // Days 24, 25, 28, 31 and 32 after enrolment on 2025-04-11.
    expect([at('2025-05-05'), at('2025-05-06'), at('2025-05-09'), at('2025-05-12'), at('2025-05-13')]).toEqual([false, true, true, true, false]);
  });

  it('counts across 29 February in a leap year', () => {
    // 2024-02-01 + 28 days = 2024-02-29; + 31 = 2024-03-03.
    expect(v2InWindow({ enrollment_date: '2024-02-01', visit2_date: '2024-02-29' })).toBe(true);
    expect(v2InWindow({ enrollment_date: '2024-02-01', visit2_date: '2024-03-03' })).toBe(true);
    expect(v2InWindow({ enrollment_date: '2024-02-01', visit2_date: '2024-03-04' })).toBe(false);
    expect(v2InWindow({ enrollment_date: '2023-02-01', visit2_date: '2023-03-04' })).toBe(true);
  });

  it('supports asymmetric windows and a symmetric shorthand with four arguments', () => {
    const asymmetric = engine.compile({ in_window: [{ var: 'v' }, '2025-01-01', 14, 0, 7] });
    expect([asymmetric({ v: '2025-01-14' }), asymmetric({ v: '2025-01-15' }), asymmetric({ v: '2025-01-22' }), asymmetric({ v: '2025-01-23' })]).toEqual([false, true, true, false]);
    const symmetric = engine.compile({ in_window: [{ var: 'v' }, '2025-01-01', 7, 1] });
    expect([symmetric({ v: '2025-01-07' }), symmetric({ v: '2025-01-09' }), symmetric({ v: '2025-01-10' })]).toEqual([true, true, false]);
  });

  it('uses the visit date as recorded at the site when it carries a time and offset', () => {
    // Day 25 in Beijing, still day 24 in UTC: the site's calendar date counts.
    expect(v2InWindow({ enrollment_date: '2025-04-11', visit2_date: '2025-05-06T00:30+08:00' })).toBe(true);
  });

  it('throws when the visit or anchor date is missing, so a missed visit is never in window by accident', () => {
    expect(() => v2InWindow({ enrollment_date: '2025-04-11' })).toThrow(/in_window: argument 1 is missing/);
    expect(() => v2InWindow({ visit2_date: '2025-05-09', enrollment_date: 'n/a' })).toThrow(/in_window: argument 2 is not an ISO date/);
  });

  it('throws when a day count from the data is not a number or a window is negative', () => {
    const fromData = engine.compile({ in_window: ['2025-01-10', '2025-01-01', { var: 'target' }, { var: 'window' }] });
    expect(() => fromData({ target: '9', window: 1 })).toThrow(/argument 3 "9" must be a number of days/);
    expect(() => fromData({ target: 9, window: -1 })).toThrow(/argument 4 -1 must not be negative/);
  });
});
