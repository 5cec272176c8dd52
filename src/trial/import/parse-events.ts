import type { TrialArm, TrialEvent } from '../store/types.js';
import { readCsvTable, type Table } from './csv-table.js';
import { quote, valueOrThrow, type ImportProblem, type Parsed } from './problems.js';

/**
 * Two layouts describe the same visit schedule:
 * - ours: event_name, label, day_offset, window_before, window_after (and optionally arm_num);
 * - REDCap's event export (Define My Events, or the API's content=event): unique_event_name, event_name (the
 *   label), arm_num and, when the project uses scheduling, day_offset, offset_min and offset_max (days
 *   allowed before and after, both positive). REDCap 14 adds custom_event_label and event_id, and leaves the
 *   offset columns out entirely without scheduling; then every event is day 0 with no window.
 * A header with unique_event_name is read as REDCap's; columns not named here are ignored.
 */
const OURS = { name: 'event_name', label: 'label', before: 'window_before', after: 'window_after', isDayOffsetRequired: true } as const;
const REDCAP = { name: 'unique_event_name', label: 'event_name', before: 'offset_min', after: 'offset_max', isDayOffsetRequired: false } as const;
const ARM_COLUMN = 'arm_num';

// REDCap stores offsets as decimals, but visit windows in protocols are whole days (and our columns are).
const WHOLE_NUMBER = /^[-+]?\d+(\.0*)?$/;
const ARM_NUMBER = /^\d+$/;

export interface ParseEventsOptions {
  /** The arms of the export (arm.csv); when given, every event must belong to one of them. */
  arms?: ReadonlyArray<TrialArm>;
  /** The file the arms came from, named in the problem. */
  armsSource?: string;
}

export function parseEventsCsv(text: string, source = 'events.csv', options: ParseEventsOptions = {}): TrialEvent[] {
  return valueOrThrow(parseEventsText(text, source, options));
}

export function parseEventsText(text: string, source = 'events.csv', options: ParseEventsOptions = {}): Parsed<TrialEvent[]> {
  const table = readCsvTable(text, source);
  if (table.value.header.length === 0) return { value: [], problems: table.problems };
  const parsed = parseEventsTable(table.value, options);
  return { value: parsed.value, problems: [...table.problems, ...parsed.problems] };
}

export function parseEventsTable(table: Table, options: ParseEventsOptions = {}): Parsed<TrialEvent[]> {
  const { source } = table;
  const problems: ImportProblem[] = [];
  const layout = table.header.includes(REDCAP.name) ? REDCAP : OURS;
  const missing = [layout.name, ...(layout.isDayOffsetRequired ? ['day_offset'] : [])].filter((column) => !table.header.includes(column));
  if (missing.length > 0) {
    for (const column of missing) {
      problems.push({ source, line: 1, field: column, value: '', problem: `the column "${column}" is missing; the header must be event_name,label,day_offset,window_before,window_after (or REDCap's event export: unique_event_name,event_name,arm_num[,day_offset,offset_min,offset_max])` });
    }
    return { value: [], problems };
  }
  const hasDayOffset = table.header.includes('day_offset');
  const hasArm = table.header.includes(ARM_COLUMN);
  const armNames = options.arms ? new Map(options.arms.map((arm) => [arm.armNum, arm.name])) : undefined;
  const armList = options.arms?.map((arm) => arm.armNum).join(', ') ?? '';

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
    const dayOffset = hasDayOffset ? wholeDays('day_offset', layout.isDayOffsetRequired, true) : 0;
    const windowBefore = wholeDays(layout.before, false, false);
    const windowAfter = wholeDays(layout.after, false, false);

    let armNum = 1;
    if (hasArm) {
      const text = cell(ARM_COLUMN);
      if (!ARM_NUMBER.test(text) || Number(text) < 1) report(ARM_COLUMN, text, text ? `${quote(text)} is not an arm number (1, 2, ...)` : 'the arm number is empty; REDCap numbers arms from 1');
      else armNum = Number(text);
    }
    if (armNames && problems.length === before && !armNames.has(armNum)) {
      report(ARM_COLUMN, String(armNum), `the event is in arm ${armNum}, but ${options.armsSource ?? 'the arms file'} defines ${armList ? `only arm${options.arms!.length > 1 ? 's' : ''} ${armList}` : 'no arms'}; export the arms and events of the same project, or fix arm_num`);
    }

    if (problems.length > before) continue;
    // REDCap's custom_event_label is per-record piping ("[visit_date]"), so its event_name is the label.
    const label = cell(layout.label) || eventName;
    events.push({ eventName, label, dayOffset, windowBefore, windowAfter, armNum });
  }
  return { value: events, problems };
}
