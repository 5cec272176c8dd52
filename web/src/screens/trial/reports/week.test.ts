import { describe, expect, it } from 'vitest';
import { aWeekAgo, localDate, mondayOf, thisWeekStart, weekStartOf } from './week';

describe('mondayOf', () => {
  it('finds the Monday of the ISO week, across month and year ends', () => {
    expect(mondayOf('2026-11-16')).toBe('2026-11-16');
    expect(mondayOf('2026-11-22')).toBe('2026-11-16');
    expect(mondayOf('2026-11-24')).toBe('2026-11-23');
    expect(mondayOf('2027-01-01')).toBe('2026-12-28');
    expect(mondayOf('2026-03-01')).toBe('2026-02-23');
  });

  it('refuses text that is not a calendar date', () => {
    expect(mondayOf('')).toBeNull();
    expect(mondayOf('2026-02-30')).toBeNull();
    expect(mondayOf('next week')).toBeNull();
  });

  it('reads a report period given as a timestamp', () => {
    expect(weekStartOf('2026-11-16T00:00:00.000Z')).toBe('2026-11-16');
  });
});

describe('localDate', () => {
  it('formats the local calendar date, and a week before it for the picker', () => {
    expect(localDate(new Date(2026, 0, 5, 23, 30))).toBe('2026-01-05');
    expect(aWeekAgo(new Date(2026, 0, 5, 23, 30))).toBe('2025-12-29');
  });
});

describe('thisWeekStart', () => {
  it('is the Monday of the running ISO week in UTC, as the server counts it', () => {
    expect(thisWeekStart(new Date('2026-11-26T12:00:00Z'))).toBe('2026-11-23');
    expect(thisWeekStart(new Date('2026-11-23T00:00:00Z'))).toBe('2026-11-23');
    // Monday 01:00 in Beijing is still Sunday in UTC: the server's running week began the Monday before.
    expect(thisWeekStart(new Date('2026-11-22T17:00:00Z'))).toBe('2026-11-16');
  });
});
