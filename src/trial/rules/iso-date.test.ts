import { describe, expect, it } from 'vitest';
import { parseIsoDate } from './iso-date.js';

describe('parseIsoDate', () => {
  it('accepts 29 February only in leap years, including the 400-year rule', () => {
    expect(parseIsoDate('2024-02-29')).not.toBeNull();
    expect(parseIsoDate('2000-02-29')).not.toBeNull();
    expect(parseIsoDate('2023-02-29')).toBeNull();
    expect(parseIsoDate('1900-02-29')).toBeNull();
  });

  it('rejects impossible dates instead of rolling them over like Date.parse', () => {
    for (const text of ['2024-04-31', '2024-13-01', '2024-00-10', '2024-01-00', '2024-01-01T24:00', '2024-01-01T10:60Z', '2024-01-01T10:00+25:00']) {
      expect(parseIsoDate(text), text).toBeNull();
    }
  });

  it('rejects non-ISO text and non-string values, missing values included', () => {
    for (const value of ['March 7, 2024', '07/03/2024', '2024-3-7', '20240307', '', null, undefined, 20240307, {}, []]) {
      expect(parseIsoDate(value), String(value)).toBeNull();
    }
  });

  it('reads the calendar date as written and the instant with its offset', () => {
    const east = parseIsoDate('2024-03-01T01:00+08:00')!;
    const utc = parseIsoDate('2024-02-29T20:00Z')!;
    expect(east.epochDay - utc.epochDay).toBe(1);
    expect(east.instantMs).toBeLessThan(utc.instantMs);
    expect(east.instantMs).toBe(Date.parse('2024-02-29T17:00:00Z'));
  });

  it('reads a datetime without an offset as UTC, so the server time zone never matters', () => {
    expect(parseIsoDate('2024-01-01T10:30')!.instantMs).toBe(Date.parse('2024-01-01T10:30:00Z'));
    expect(parseIsoDate('2024-01-01 10:30:15.250')!.instantMs).toBe(Date.parse('2024-01-01T10:30:15.250Z'));
  });

  it('accepts compact and hour-only offsets and valid Date objects', () => {
    expect(parseIsoDate('2024-01-01T10:00-0530')!.instantMs).toBe(Date.parse('2024-01-01T15:30:00Z'));
    expect(parseIsoDate('2024-01-01T10:00+02')!.instantMs).toBe(Date.parse('2024-01-01T08:00:00Z'));
    expect(parseIsoDate(new Date('2024-01-01T00:00:00Z'))!.hasTime).toBe(true);
    expect(parseIsoDate(new Date('nope'))).toBeNull();
  });

  it('handles years before 100 without mapping them to the 1900s', () => {
    expect(parseIsoDate('0050-01-01')!.epochDay).toBeLessThan(parseIsoDate('1000-01-01')!.epochDay);
  });
});
