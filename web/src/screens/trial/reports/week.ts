/**
 * The Monday (YYYY-MM-DD) of the ISO week holding `date` (YYYY-MM-DD), computed on the calendar date alone so
 * the browser's time zone cannot move it a day; null for text that is not a date.
 */
export function mondayOf(date: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(date);
  if (!match) return null;
  const day = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  if (Number.isNaN(day.getTime()) || day.getUTCDate() !== Number(match[3])) return null;
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  day.setUTCDate(day.getUTCDate() - sinceMonday);
  return day.toISOString().slice(0, 10);
}

/** The Monday a weekly report covers, from its period start (a date or a timestamp). */
export function weekStartOf(periodStart: string): string | null {
  return mondayOf(periodStart);
}

/** A date in the browser's calendar (YYYY-MM-DD); the date picker opens on a day of last week, the latest week with a report to write. */
export function localDate(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

export function aWeekAgo(now: Date = new Date()): string {
  const at = new Date(now);
  at.setDate(at.getDate() - 7);
  return localDate(at);
}

/**
 * The Monday of the running week as the server counts weeks (ISO weeks in UTC): a report regenerated for it is of
 * the week so far. The browser's own calendar could already be in next week (east of UTC on a Monday morning),
 * which the server refuses as a week not yet started.
 */
export function thisWeekStart(now: Date = new Date()): string {
  const monday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - ((now.getUTCDay() + 6) % 7)));
  return monday.toISOString().slice(0, 10);
}
