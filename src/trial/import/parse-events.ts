import type { TrialEvent } from '../store/types.js';
import { readCsvTable, type Table } from './csv-table.js';
import { quote, valueOrThrow, type ImportProblem, type Parsed } from './problems.js';

/**
 * Two layouts describe the same visit schedule:
 * - ours: event_name, label, day_offset, window_before, window_after;
 * - REDCap's "Define My Events" export and API: unique_event_name, event_name (the label), day_offset,
 *   offset_min, offset_max (days before and after, both positive), custom_event_label.
 * A header with unique_event_name is read as REDCap's.
 */
const OURS = { name: 'event_name', label: 'label', before: 'window_before', after: 'window_after' } as const;
const REDCAP = { name: 'unique_event_name', label: 'event_name', before: 'offset_min', after: 'offset_max' } as const;

// REDCap stores offsets as decimals, but visit windows in protocols are whole days (and our columns are).
const WHOLE_NUMBER = /^[-+]?\d+(\.0*)?$/;

export function parseEventsCsv(text: string, source = 'events.csv'): TrialEvent[] {
  return valueOrThrow(parseEventsText(text, source));
}

export function parseEventsText(text: string, source = 'events.csv'): Parsed<TrialEvent[]> {
  const table = readCsvTable(text, source);
  if (table.value.header.length === 0) return { value: [], problems: table.problems };
  const parsed = parseEventsTable(table.value);
  return { value: parsed.value, problems: [...table.problems, ...parsed.problems] };
}

export function parseEventsTable(table: Table): Parsed<TrialEvent[]> {
  const { source } = table;
  const problems: ImportProblem[] = [];
  const layout = table.header.includes(REDCAP.name) ? REDCAP : OURS;
  const missing = [layout.name, 'day_offset'].filter((column) => !table.header.includes(column));
  if (missing.length > 0) {
    for (const column of missing) {
      problems.push({ source, line: 1, field: column, value: '', problem: `the column "${column}" is missing; the header must be event_name,label,day_offset,window_before,window_after (or REDCap's unique_event_name,event_name,day_offset,offset_min,offset_max)` });
    }
    return { value: [], problems };
  }

  const events: TrialEvent[] = [];
  const lineOfEvent = new Map<string, number>();
  for (const row of table.rows) {
    const cell = (column: string) => (row.values[column] ?? '').trim();
    const report = (field: string, value: string, problem: string) => problems.push({ source, line: row.line, field, value, problem });
    const before = problems.length;

    const eventName = cell(layout.name);
    if (!eventName) report(layout.name, '', 'the event name is empty');
    else if (lineOfEvent.has(eventName)) report(layout.name, eventName, `${quote(eventName)} is already defined on line ${lineOfEvent.get(eventName)}; event names must be unique`);
    else lineOfEvent.set(eventName, row.line);

    const wholeDays = (column: string, isRequired: boolean, isSigned: boolean): number => {
      const text = cell(column);
      if (!text) {
        if (isRequired) report(column, '', 'the day offset is empty; give the target day relative to enrolment (day 0)');
        return 0;
      }
      if (!WHOLE_NUMBER.test(text)) {
        report(column, text, `${quote(text)} is not a whole number of days`);
        return 0;
      }
      const days = Number(text);
      if (!isSigned && days < 0) report(column, text, `${quote(text)} is negative; a window is the number of days allowed before or after the target day`);
      return days;
    };
    const dayOffset = wholeDays('day_offset', true, true);
    const windowBefore = wholeDays(layout.before, false, false);
    const windowAfter = wholeDays(layout.after, false, false);

    if (problems.length > before) continue;
    // REDCap's custom_event_label is per-record piping ("[visit_date]"), so its event_name is the label.
    const label = cell(layout.label) || eventName;
    events.push({ eventName, label, dayOffset, windowBefore, windowAfter });
  }
  return { value: events, problems };
}
