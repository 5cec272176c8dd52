import type { User } from '../../core/auth/users.js';
import { assertProjectReader, assertProjectWriter } from '../../core/auth/project-access.js';
import type { MemoryReportKind } from '../../core/db/schema/memory.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { countTokens } from '../../core/tokenizer.js';
import { nothingStored } from '../model-output.js';
import type { MemoryDeps, MemoryReportsService } from '../types.js';
import { historyBlock } from './history-block.js';
import { addWeeks, assertWeekStarted, formatDay, isoWeekLabel, mondayOf, parseWeekStart } from './iso-week.js';
import {
  selectLogTurns,
  selectNewestWeeks,
  selectProjectsWithTurns,
  selectReport,
  selectFullyReportedWeeks,
  selectReports,
  selectWeekStats,
  selectWeeksOfYear,
  selectWeeksWithTurns,
  selectWindowStart,
  selectYearStamps,
  selectYears,
  selectYearsOfWeeksBefore,
  toView,
  upsertReport,
  type ReportRow,
} from './report-queries.js';
import { summarizeWeek, summarizeYear, weekLog } from './summarize.js';

export { isoWeekLabel } from './iso-week.js';

/** Who generates reports when no person asked: the weekly job (also for the yearly roll-up it runs). */
export const WEEKLY_JOB_ACTOR = 'memory-weekly';

/**
 * A first run on a project with a long past catches up over several jobs rather than holding one job (and the
 * model) for an hour; the weekly cron, or a retry, continues where it stopped.
 */
export const MAX_WEEKS_PER_RUN = 8;

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;

/**
 * The history book of a project (seed 002): one report per ISO week made from that week's conversation log, and
 * one summary per year for the weeks a history question no longer reads one by one. Only history and trend
 * questions read it (`promptBlock`), at most `historyWeeks` weekly reports at a time.
 */
export function createMemoryReports(deps: MemoryDeps): MemoryReportsService {
  const { db } = deps;

  /**
   * One week's report from its log; undefined when nobody spoke in the project that week. A week still running is
   * read up to `now` and stored as a report of the week so far, which the weekly job replaces once the week ends.
   */
  async function generateWeek(projectId: string, weekStart: Date, by: { name: string; userId?: string }, now = new Date()): Promise<ReportRow | undefined> {
    const label = isoWeekLabel(weekStart);
    const weekEnd = addWeeks(weekStart, 1);
    const readUpTo = now < weekEnd ? now : undefined;
    const turns = await selectLogTurns(db, projectId, weekStart, readUpTo ?? weekEnd);
    if (!turns.length) return undefined;
    const log = weekLog(turns);
    // Admin-only: the prompt holds every member's conversations, which each member may otherwise read only of their own.
    const run = await deps.trace.start({ kind: 'job', name: 'memory.weekly_report', projectId, userId: by.userId, adminOnly: true, input: { label, turns: log.used, turnsLeftOut: log.left, ...(readUpTo ? { readUpTo: readUpTo.toISOString() } : {}) } });
    try {
      const summary = await keepPrevious(projectId, 'week', formatDay(weekStart), `report of week ${label}`, () => summarizeWeek(deps.llm, run, { label, log, readUpTo }, deps.agents));
      const row = await upsertReport(db, { projectId, kind: 'week', periodStart: formatDay(weekStart), label, summary, tokens: countTokens(summary), sourceCount: log.used, generatedBy: by.name }, now);
      await run.finish({ status: 'success', output: { label, tokens: row.tokens, partial: Boolean(readUpTo) } });
      return row;
    } catch (error) {
      await run.finish({ status: 'failed', error: errorMessage(error) });
      throw error;
    }
  }

  /**
   * The model's new summary, or an error saying plainly that it was not stored, why, and which report stands: a
   * summary that fails its checks (cut off, oversized, empty) or an outage never replaces the last good one.
   */
  async function keepPrevious(projectId: string, kind: MemoryReportKind, periodStart: string, what: string, summarize: () => Promise<string>): Promise<string> {
    try {
      return await summarize();
    } catch (error) {
      const previous = await selectReport(db, projectId, kind, periodStart);
      const stands = previous
        ? `The previous ${what} (made ${previous.updatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC) stands unchanged.`
        : `There was no ${what} before, so there is none now.`;
      throw nothingStored(error, (why) => `The new ${what} was not stored: ${why} ${stands} Try again later; the trace of this run shows the model's answer.`);
    }
  }

  async function rollUpYear(projectId: string, year: string): Promise<void> {
    const weeks = await selectWeeksOfYear(db, projectId, year);
    if (!weeks.length) return;
    const run = await deps.trace.start({ kind: 'job', name: 'memory.yearly_summary', projectId, input: { year, weeks: weeks.length } });
    try {
      const summary = await keepPrevious(projectId, 'year', `${year}-01-01`, `yearly summary of ${year}`, () => summarizeYear(deps.llm, run, { year, weeks }, deps.agents));
      await upsertReport(db, { projectId, kind: 'year', periodStart: `${year}-01-01`, label: year, summary, tokens: countTokens(summary), sourceCount: weeks.length, generatedBy: WEEKLY_JOB_ACTOR });
      await run.finish({ status: 'success', output: { year, weeks: weeks.length } });
    } catch (error) {
      await run.finish({ status: 'failed', error: errorMessage(error) });
      throw error;
    }
  }

  const service: MemoryReportsService = {
    async list(actor: User, projectId: string, options = {}) {
      await assertProjectReader(deps.users, actor, projectId);
      return (await selectReports(db, projectId, { kind: reportKind(options.kind), limit: listLimit(options.limit) })).map(toView);
    },

    async regenerate(actor, projectId, weekStart, now = new Date()) {
      await assertProjectWriter(deps.users, actor, projectId);
      const monday = parseWeekStart(weekStart);
      assertWeekStarted(monday, now);
      let row: ReportRow | undefined;
      try {
        row = await generateWeek(projectId, monday, { name: actor.name, userId: actor.id }, now);
      } catch (error) {
        if (!wasNotStored(error)) throw error;
        // The person clicked "Regenerate" and gets a plain answer; the cause (endpoint, the server's words) is the operator's.
        deps.logger.warn({ projectId, weekStart: formatDay(monday), code: error.code, err: error }, 'weekly report not regenerated: the model failed');
        const standing = await selectReport(db, projectId, 'week', formatDay(monday));
        return { stored: false, report: standing ? toView(standing) : null, notice: notStoredNotice(error.code, isoWeekLabel(monday), standing) };
      }
      if (!row) {
        const period = monday.getTime() === mondayOf(now).getTime() ? `this week so far (${isoWeekLabel(monday)}, since ${formatDay(monday)})` : `that week (${isoWeekLabel(monday)}, from ${formatDay(monday)})`;
        throw new ClinAgentError('VALIDATION_FAILED', `There is no conversation in ${period} in project "${projectId}", so there is nothing to report. Choose a week in which the team talked with the assistant.`, {
          field: 'weekStart',
          projectId,
        });
      }
      return { stored: true, report: toView(row), notice: null };
    },

    async promptBlock(projectId) {
      const newestFirst = await selectNewestWeeks(db, projectId, deps.config.historyWeeks);
      const oldestInWindow = newestFirst.length === deps.config.historyWeeks ? newestFirst.at(-1) : undefined;
      // Years are named by the weeks left out of the window, so a year already fully inside it is not repeated.
      const years = oldestInWindow ? await selectYears(db, projectId, await selectYearsOfWeeksBefore(db, projectId, oldestInWindow.periodStart)) : [];
      return historyBlock(years, [...newestFirst].reverse());
    },

    async generateDue(projectId, now = new Date()) {
      if (!deps.llm.isConfigured) {
        // Every project's weekly job would fail and retry for nothing; the gateway's own error names what to set.
        deps.logger.warn({ projectId }, 'weekly memory reports skipped: no LLM is configured');
        return { generated: [] };
      }
      const endOfLastWeek = mondayOf(now);
      // A report of a week so far is not counted, so the week's full report replaces it once the week has ended.
      const reported = await selectFullyReportedWeeks(db, projectId);
      const due = (await selectWeeksWithTurns(db, projectId, endOfLastWeek)).filter((week) => !reported.has(week)).slice(0, MAX_WEEKS_PER_RUN);
      const generated: string[] = [];
      for (const week of due) {
        const row = await generateWeek(projectId, parseWeekStart(week), { name: WEEKLY_JOB_ACTOR }, now);
        if (row) generated.push(row.label);
      }
      await service.rollUpYears(projectId);
      return { generated };
    },

    async rollUpYears(projectId) {
      const windowStart = await selectWindowStart(db, projectId, deps.config.historyWeeks);
      if (!windowStart) return { years: [] };
      const years = await selectYearsOfWeeksBefore(db, projectId, windowStart);
      const stamps = await selectYearStamps(db, projectId, years);
      const rolled: string[] = [];
      for (const { year, weeks, newestMicros } of await selectWeekStats(db, projectId, years)) {
        const summary = stamps.get(year);
        // A week added (a late catch-up) or regenerated since the yearly summary was made leaves it out of date.
        if (summary && summary.sourceCount === weeks && summary.updatedMicros >= newestMicros) continue;
        await rollUpYear(projectId, year);
        rolled.push(year);
      }
      return { years: rolled.sort() };
    },

    async projectsWithConversations() {
      return selectProjectsWithTurns(db);
    },
  };
  return service;
}

/** A model step that failed with nothing stored (see keepPrevious); a cancellation or a fault of ours is not one. */
function wasNotStored(error: unknown): error is ClinAgentError {
  return ClinAgentError.isInstance(error) && error.details.stored === false;
}

/** Why, in the words of the person who asked: what the model did, never its server's own error text. */
function plainWhy(code: string): string {
  switch (code) {
    case 'LLM_BAD_RESPONSE':
      return "the model's answer was unusable (cut off, empty, far too long or not written as prose)";
    case 'LLM_TIMEOUT':
      return 'the model did not answer in time';
    case 'LLM_RATE_LIMITED':
      return 'the model is busy with too many requests';
    default:
      return 'the model is unavailable';
  }
}

function notStoredNotice(code: string, label: string, standing: ReportRow | undefined): string {
  const stands = standing
    ? `The previous report of week ${label} (made ${standing.updatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC) stands unchanged.`
    : `There is no report of week ${label} yet.`;
  return `The new report of week ${label} could not be written: ${plainWhy(code)}. ${stands} Try again later; if it keeps happening, tell your administrator.`;
}

function reportKind(kind: unknown): MemoryReportKind | undefined {
  if (kind === undefined || kind === 'week' || kind === 'year') return kind;
  throw new ClinAgentError('VALIDATION_FAILED', `kind: must be "week" or "year", got ${JSON.stringify(kind)}.`, { field: 'kind' });
}

function listLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new ClinAgentError('VALIDATION_FAILED', `limit: must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(limit)}.`, { field: 'limit' });
  }
  return limit;
}
