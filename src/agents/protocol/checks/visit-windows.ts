import type { ScheduledVisit, StudyDesign } from '../context.js';
import { variableNameProblem } from './criterion-test.js';
import type { SkippedCheck, VisitWindowTest } from './types.js';

interface VisitWindow {
  visit: ScheduledVisit;
  window: VisitWindowTest;
}

/**
 * The window of each scheduled visit, as rules address it: the visit's date under its event
 * (`v2_arm_1.visit_date`), counted from the baseline date. The baseline is the day-0 visit's date under its
 * event when the schedule names one; otherwise the top-level `visitDateField`, which is the first event's value
 * (src/trial/sop/record-context.ts lifts the first event's fields to the top level).
 */
export function visitWindows(design: StudyDesign | undefined): { windows: VisitWindow[]; skipped: SkippedCheck[] } {
  const visits = design?.visits ?? [];
  const skipped: SkippedCheck[] = [];
  const skip = (visit: ScheduledVisit, reason: string) => skipped.push({ source: 'visit_window', text: visitLabel(visit), reason });
  if (visits.length === 0) return { windows: [], skipped };

  const dateField = design?.visitDateField?.trim();
  const dateProblem = dateField ? variableNameProblem(dateField) : 'no visit date variable: set studyDesign.visitDateField to the variable holding each visit\'s date';
  if (!dateField || dateProblem) {
    for (const visit of visits) skip(visit, dateField ? `visitDateField ${dateProblem}` : dateProblem!);
    return { windows: [], skipped };
  }

  const baseline = visits.find((visit) => visit.day === 0);
  const baselineEvent = baseline?.event && !variableNameProblem(baseline.event) ? baseline.event : undefined;
  const anchorField = baselineEvent ? `${baselineEvent}.${dateField}` : dateField;
  const eventOwners = new Map<string, ScheduledVisit>();
  const windows: VisitWindow[] = [];
  for (const visit of visits) {
    if (visit === baseline) {
      skip(visit, 'the baseline visit (day 0): the other windows are counted from its date, so it has no window of its own to check');
      continue;
    }
    const problem = visitProblem(visit, eventOwners);
    if (problem) {
      skip(visit, problem);
      continue;
    }
    eventOwners.set(visit.event!, visit);
    // A window given on one side only is read as symmetric, as in_window reads a missing daysAfter.
    const before = visit.windowBefore ?? visit.windowAfter!;
    const after = visit.windowAfter ?? visit.windowBefore!;
    windows.push({ visit, window: { dateField: `${visit.event!}.${dateField}`, anchorField, day: visit.day, before, after } });
  }
  return { windows, skipped };
}

function visitProblem(visit: ScheduledVisit, eventOwners: ReadonlyMap<string, ScheduledVisit>): string | undefined {
  if (!Number.isInteger(visit.day)) return `day ${JSON.stringify(visit.day)} is not a whole number of days from baseline`;
  if (visit.windowBefore === undefined && visit.windowAfter === undefined) {
    return 'no window: give windowBefore and windowAfter in days (e.g. 3 and 3 for "day 28 ± 3")';
  }
  for (const [name, days] of [['windowBefore', visit.windowBefore], ['windowAfter', visit.windowAfter]] as const) {
    if (days !== undefined && !(Number.isInteger(days) && days >= 0)) return `${name} ${JSON.stringify(days)} must be a whole number of days, 0 or more`;
  }
  if (!visit.event) return 'no event: name the trial\'s event for this visit (the REDCap unique event name, e.g. "v2_arm_1") so its date can be found';
  const eventProblem = variableNameProblem(visit.event);
  if (eventProblem) return `event ${eventProblem.replace('variable name', 'event name')}`;
  const owner = eventOwners.get(visit.event);
  if (owner) return `event "${visit.event}" is already the event of ${visitLabel(owner)}: each visit needs its own event`;
  return undefined;
}

export function visitLabel(visit: ScheduledVisit): string {
  const before = visit.windowBefore ?? visit.windowAfter;
  const after = visit.windowAfter ?? visit.windowBefore;
  const window = before === undefined ? '' : ` -${before}/+${after}`;
  return `${visit.name || 'Unnamed visit'}: day ${visit.day}${window}`;
}
