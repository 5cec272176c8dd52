import { dataBlock } from '../../core/llm/untrusted-data.js';
import { countTokens, fitToBudget, trimToTokens } from '../../core/tokenizer.js';
import type { ReportRow } from './report-queries.js';
import { MAX_CHARS_PER_TOKEN, REPLY_TOKEN_SLACK, WEEK_REPLY_MAX_TOKENS, YEAR_REPLY_MAX_TOKENS } from './summarize.js';

/**
 * The whole history block a history question carries, in our tokenizer's tokens: 50 weekly reports of a busy
 * project and a few yearly summaries, with room left in a 32k-token context for the hot memory, the profile, the
 * question and the engine's own reasoning. The newest reports are kept; older ones that do not fit are named as
 * left out, never cut in the middle.
 */
export const HISTORY_MAX_TOKENS = 24_000;

/**
 * The history book as a history question reads it: yearly summaries first, then the weekly reports of the window,
 * oldest first, all in one `<history>` block. Summaries are model output made from what users typed, so they go in
 * as data, never as instructions. Each report is held to what its model call may write (one stored before those
 * checks, or edited into the table, brings no more), and the block to HISTORY_MAX_TOKENS.
 */
export function historyBlock(years: readonly ReportRow[], weeksOldestFirst: readonly ReportRow[]): string {
  if (!years.length && !weeksOldestFirst.length) return '';
  const lines = [
    ...years.map((year) => `[${year.label} (year)] ${bounded(year.summary, YEAR_REPLY_MAX_TOKENS * REPLY_TOKEN_SLACK)}`),
    ...weeksOldestFirst.map((week) => `[${week.label}] ${bounded(week.summary, WEEK_REPLY_MAX_TOKENS * REPLY_TOKEN_SLACK)}`),
  ];
  const newestFirst = fitToBudget([...lines].reverse(), (line) => `${line}\n`, HISTORY_MAX_TOKENS);
  const left = lines.length - newestFirst.length;
  const kept = newestFirst.reverse();
  if (left) kept.unshift(`(${left} older report(s) did not fit and are not shown.)`);
  return dataBlock('history', kept.join('\n'));
}

function bounded(summary: string, maxTokens: number): string {
  const head = summary.slice(0, maxTokens * MAX_CHARS_PER_TOKEN);
  const text = countTokens(head) > maxTokens ? trimToTokens(head, maxTokens) : head;
  return text.length < summary.length ? `${text} [...]` : summary;
}
