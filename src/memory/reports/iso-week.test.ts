import { describe, expect, it } from 'vitest';
import { assertWeekStarted, formatDay, isPartialWeek, isoWeek, isoWeekLabel, mondayOf, parseWeekStart } from './iso-week.js';

const day = (text: string) => new Date(`${text}T00:00:00Z`);

describe('ISO weeks in UTC', () => {
  it('labels weeks by the ISO year of their Thursday, across year ends', () => {
    expect(isoWeekLabel(day('2026-11-16'))).toBe('2026-W47');
    // 2026 starts on a Thursday, so it has 53 weeks; its last week runs into 2027.
    expect(isoWeekLabel(day('2026-12-28'))).toBe('2026-W53');
    expect(isoWeekLabel(day('2027-01-01'))).toBe('2026-W53');
    expect(isoWeekLabel(day('2027-01-03'))).toBe('2026-W53');
    expect(isoWeekLabel(day('2027-01-04'))).toBe('2027-W01');
    // The other way round: the last days of December in week 1 of the next year.
    expect(isoWeekLabel(day('2024-12-30'))).toBe('2025-W01');
    expect(isoWeek(day('2025-12-29'))).toEqual({ year: 2026, week: 1 });
    // A Sunday belongs to the week of the Monday before it, not the one after.
    expect(isoWeekLabel(day('2021-01-03'))).toBe('2020-W53');
    expect(isoWeekLabel(day('2026-01-01'))).toBe('2026-W01');
  });

  it('finds the Monday of any instant in UTC, whatever the time of day', () => {
    expect(formatDay(mondayOf(day('2027-01-01')))).toBe('2026-12-28');
    expect(formatDay(mondayOf(new Date('2026-11-22T23:59:59.999Z')))).toBe('2026-11-16');
    expect(formatDay(mondayOf(new Date('2026-11-23T00:00:00.000Z')))).toBe('2026-11-23');
    expect(mondayOf(new Date('2026-11-18T15:30:00Z')).toISOString()).toBe('2026-11-16T00:00:00.000Z');
  });

  it('accepts a Monday as YYYY-MM-DD and refuses anything else with the format and an example', () => {
    expect(parseWeekStart('2026-12-28').toISOString()).toBe('2026-12-28T00:00:00.000Z');
    const help = 'weekStart must be the Monday of an ISO week as YYYY-MM-DD, e.g. 2026-11-16';
    for (const bad of ['2026-11-17', '2027-01-01', '2026-02-30', '2026-13-01', '26-11-16', '2026-11-16T00:00:00Z', 'last week', '', 20261116, undefined]) {
      let error: unknown;
      try {
        parseWeekStart(bad);
      } catch (caught) {
        error = caught;
      }
      expect(error, String(bad)).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: { field: 'weekStart' } });
      expect((error as Error).message.startsWith(help), (error as Error).message).toBe(true);
    }
    expect(() => parseWeekStart('2026-11-18')).toThrow(/2026-11-18 is not a Monday \(its week starts 2026-11-16\)/);
  });

  it('refuses a week that has not started, and takes the running week from its first instant', () => {
    const monday = day('2026-11-16');
    expect(() => assertWeekStarted(day('2026-11-23'), new Date('2026-11-22T23:59:59.999Z'))).toThrow(/2026-W48 .* has not started yet.*this week \(2026-11-16, a report of the week so far\)/);
    expect(() => assertWeekStarted(day('2026-12-28'), new Date('2026-11-24T00:00:00Z'))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'weekStart', thisWeekStart: '2026-11-23' } }));
    expect(() => assertWeekStarted(monday, new Date('2026-11-16T00:00:00Z'))).not.toThrow();
    expect(() => assertWeekStarted(monday, new Date('2026-11-30T00:00:00Z'))).not.toThrow();
  });

  it('calls a weekly report partial when it was made before its week ended, to the millisecond', () => {
    const week = (updatedAt: string) => ({ kind: 'week', periodStart: '2026-11-16', updatedAt: new Date(updatedAt) });
    expect(isPartialWeek(week('2026-11-22T23:59:59.999Z'))).toBe(true);
    expect(isPartialWeek(week('2026-11-16T00:00:00Z'))).toBe(true);
    expect(isPartialWeek(week('2026-11-23T00:00:00Z'))).toBe(false);
    expect(isPartialWeek({ kind: 'year', periodStart: '2026-01-01', updatedAt: new Date('2026-06-01T00:00:00Z') })).toBe(false);
  });
});
