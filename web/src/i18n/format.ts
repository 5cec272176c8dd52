import type { Locale } from './translate';

/**
 * Dates, times and values as a coordinator reads them. en uses en-GB (day month year, 24-hour clock), since
 * a trial's sites rarely share the US month-first order and 06/07 must not be ambiguous.
 */
const INTL_LOCALE: Record<Locale, string> = { en: 'en-GB', zh: 'zh-CN' };

function toDate(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function formatDateTime(iso: string | null | undefined, locale: Locale): string {
  const date = toDate(iso);
  if (!date) return '—';
  return new Intl.DateTimeFormat(INTL_LOCALE[locale], { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "in 3 hours", "5 minutes ago"; the largest whole unit, seconds shown as "now". */
export function formatRelative(iso: string | null | undefined, locale: Locale, now: Date = new Date()): string {
  const date = toDate(iso);
  if (!date) return '';
  const diffMs = date.getTime() - now.getTime();
  const format = new Intl.RelativeTimeFormat(INTL_LOCALE[locale], { numeric: 'auto' });
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diffMs) >= ms) return format.format(Math.round(diffMs / ms), unit);
  }
  return format.format(0, 'second');
}

/**
 * The plural category of a count in a language (`one`, `other`, …), by the browser's CLDR rules: English has
 * "1 problem" and "2 problems", Chinese one form for every count.
 */
export function pluralCategory(count: number, locale: Locale): Intl.LDMLPluralRule {
  return new Intl.PluralRules(INTL_LOCALE[locale]).select(count);
}

/** A record or query value: blank for null or '', text as-is, anything else as compact JSON. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
