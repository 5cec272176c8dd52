import { boundaryValues } from './boundary-values.js';
import type { CompiledProtocolChecks, ProtocolCheck, TestRecord, VisitWindowTest } from './types.js';

/** Any fixed date serves as baseline; a leap year's February makes calendar-day arithmetic show its errors. */
const BASELINE_DATE = '2024-02-20';
const DAY_MS = 86_400_000;

/**
 * Records that exercise each rule at its edges, each with whether the rule must fire on it: for an inclusion
 * rule the values that just miss the criterion fire and those on its bound pass; an exclusion rule the other
 * way round; a visit date one day outside the window fires and one on the window's edge passes. A blank value
 * is probed too (inclusion fires, exclusion and window pass). Each record holds only what its rule reads.
 */
export function generateTestRecords(compiled: Pick<CompiledProtocolChecks, 'rules'>): TestRecord[] {
  return compiled.rules.flatMap((check) => (check.source === 'visit_window' ? windowRecords(check.ruleId, check.window) : criterionRecords(check)));
}

function criterionRecords(check: Extract<ProtocolCheck, { test: unknown }>): TestRecord[] {
  const { field } = check.test;
  const { meets, misses } = boundaryValues(check.test);
  const meetsOutcome = check.source === 'inclusion' ? 'passes' : 'fires';
  const missesOutcome = check.source === 'inclusion' ? 'fires' : 'passes';
  const record = (value: unknown, note: string, expected: TestRecord['expected']): TestRecord => ({
    ruleId: check.ruleId,
    label: `${field} = ${JSON.stringify(value)} (${note})`,
    expected,
    data: { [field]: value },
  });
  return [
    ...meets.map(({ value, note }) => record(value, `${note}: meets the criterion`, meetsOutcome)),
    ...misses.map(({ value, note }) => record(value, `${note}: does not meet the criterion`, missesOutcome)),
    { ruleId: check.ruleId, label: `${field} blank`, expected: missesOutcome, data: { [field]: null } },
  ];
}

function windowRecords(ruleId: string, window: VisitWindowTest): TestRecord[] {
  const earliest = window.day - window.before;
  const latest = window.day + window.after;
  const record = (day: number | null, label: string, expected: TestRecord['expected']): TestRecord => {
    const data: Record<string, unknown> = {};
    setPath(data, window.anchorField, BASELINE_DATE);
    setPath(data, window.dateField, day === null ? null : addDays(BASELINE_DATE, day));
    return { ruleId, label, expected, data };
  };
  return [
    record(window.day, `on the target day ${window.day}`, 'passes'),
    record(earliest, `on the window's first day ${earliest}`, 'passes'),
    record(latest, `on the window's last day ${latest}`, 'passes'),
    record(earliest - 1, `one day early (day ${earliest - 1})`, 'fires'),
    record(latest + 1, `one day late (day ${latest + 1})`, 'fires'),
    record(null, 'visit date blank', 'passes'),
  ];
}

/** Sets `a.b` as JSON Logic's var reads it: the event's object, then the field in it. */
function setPath(data: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = data;
  for (const part of parts.slice(0, -1)) {
    const next = target[part];
    target = (target[part] = next !== null && typeof next === 'object' ? next : {}) as Record<string, unknown>;
  }
  target[parts.at(-1)!] = value;
}

function addDays(isoDate: string, days: number): string {
  return new Date(Date.parse(`${isoDate}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
