import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { ReportRow } from './report-queries.js';

/**
 * The history book as a history question reads it: yearly summaries first, then the weekly reports of the window,
 * oldest first, all in one `<history>` block. Summaries are model output made from what users typed, so they go in
 * as data, never as instructions.
 */
export function historyBlock(years: readonly ReportRow[], weeksOldestFirst: readonly ReportRow[]): string {
  if (!years.length && !weeksOldestFirst.length) return '';
  const lines = [...years.map((year) => `[${year.label} (year)] ${year.summary}`), ...weeksOldestFirst.map((week) => `[${week.label}] ${week.summary}`)];
  return dataBlock('history', lines.join('\n'));
}
