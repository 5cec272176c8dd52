import { ClinAgentError } from '../../core/errors.js';

/**
 * ISO 8601 weeks in UTC, the periods weekly reports cover. A week runs Monday 00:00Z to the next Monday 00:00Z and
 * belongs to the ISO year of its Thursday, so 2027-01-01 (a Friday) is in 2026-W53 and 2025-12-29 in 2026-W01.
 * UTC rather than a site's zone: the same turn must land in the same week on every server.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const WEEK_MS = 7 * DAY_MS;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const WEEK_START_HELP = 'weekStart must be the Monday of an ISO week as YYYY-MM-DD, e.g. 2026-11-16';

/** 'YYYY-MM-DD' of a UTC instant. */
export function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Days since Monday: 0 on Monday, 6 on Sunday. */
function weekdayIndex(date: Date): number {
  return (date.getUTCDay() + 6) % 7;
}

/** Monday 00:00Z of the ISO week that holds `date`. */
export function mondayOf(date: Date): Date {
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return new Date(day - weekdayIndex(date) * DAY_MS);
}

export function addWeeks(date: Date, weeks: number): Date {
  return new Date(date.getTime() + weeks * WEEK_MS);
}

/** ISO year and week number of the week that holds `date`. */
export function isoWeek(date: Date): { year: number; week: number } {
  const thursday = new Date(mondayOf(date).getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / WEEK_MS);
  return { year, week };
}

/** '2026-W47'. */
export function isoWeekLabel(date: Date): string {
  const { year, week } = isoWeek(date);
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** Checks a caller's weekStart and returns that Monday 00:00Z. */
export function parseWeekStart(value: unknown): Date {
  const match = typeof value === 'string' ? DATE.exec(value) : null;
  if (!match) throw new ClinAgentError('VALIDATION_FAILED', `${WEEK_START_HELP}; got ${JSON.stringify(value)}.`, { field: 'weekStart' });
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-02-30 over into March; a date that does not read back the same does not exist.
  if (formatDay(date) !== value) throw new ClinAgentError('VALIDATION_FAILED', `${WEEK_START_HELP}; ${value} is not a date.`, { field: 'weekStart' });
  if (weekdayIndex(date) !== 0) {
    throw new ClinAgentError('VALIDATION_FAILED', `${WEEK_START_HELP}; ${value} is not a Monday (its week starts ${formatDay(mondayOf(date))}).`, { field: 'weekStart' });
  }
  return date;
}

/**
 * A week's report reads what was said in it: the running week gives a report of the week so far (replaced by the
 * full report once the week has ended), a week still to come has nothing to read.
 */
export function assertWeekStarted(weekStart: Date, now: Date): void {
  if (weekStart.getTime() > now.getTime()) {
    const thisWeek = mondayOf(now);
    throw new ClinAgentError(
      'VALIDATION_FAILED',
      `The week ${isoWeekLabel(weekStart)} (from ${formatDay(weekStart)}) has not started yet, so nobody has talked in it. Choose this week (${formatDay(thisWeek)}, a report of the week so far) or an earlier one.`,
      { field: 'weekStart', thisWeekStart: formatDay(thisWeek) },
    );
  }
}

/**
 * A weekly report made before its week ended covers the week so far. Its `updatedAt` is the instant its log was
 * read (see upsertReport), so the stored row says both that it is partial and how far it reaches, with no column
 * of its own.
 */
export function isPartialWeek(report: { kind: string; periodStart: string; updatedAt: Date }): boolean {
  return report.kind === 'week' && report.updatedAt.getTime() < addWeeks(new Date(`${report.periodStart}T00:00:00Z`), 1).getTime();
}
