import { describe, expect, it } from 'vitest';
import { formatDateTime, formatRelative, formatValue } from './format';

describe('format', () => {
  it('writes dates day-first in English and year-first in Chinese', () => {
    const iso = '2026-07-06T06:00:00.000Z';
    expect(formatDateTime(iso, 'en')).toMatch(/2026/);
    expect(formatDateTime(iso, 'en').indexOf('Jul')).toBeLessThan(formatDateTime(iso, 'en').indexOf('2026'));
    expect(formatDateTime(iso, 'zh')).toMatch(/^2026/);
    expect(formatDateTime(null, 'en')).toBe('—');
    expect(formatDateTime('not a date', 'en')).toBe('—');
  });

  it('says how far away a time is in the largest whole unit', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(formatRelative('2026-01-01T03:00:00Z', 'en', now)).toBe('in 3 hours');
    expect(formatRelative('2025-12-31T23:55:00Z', 'en', now)).toBe('5 minutes ago');
    expect(formatRelative('2026-01-01T00:00:10Z', 'en', now)).toBe('now');
    expect(formatRelative('2026-01-03T00:00:00Z', 'zh', now)).toBe('后天');
  });

  it('shows blank values as empty and structured ones as JSON', () => {
    expect(formatValue(null)).toBe('');
    expect(formatValue('')).toBe('');
    expect(formatValue(16)).toBe('16');
    expect(formatValue('2025-03-12')).toBe('2025-03-12');
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
  });
});
