import { z } from 'zod';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolDefinition } from '../../core/tools/registry.js';
import { identifierMask } from '../identifiers.js';
import { daysBetween } from '../rules/date-operators.js';
import { parseIsoDate, type IsoDate } from '../rules/iso-date.js';
import { getDictionary, getEvents } from '../store/dictionary.js';
import { getRecord } from '../store/records.js';
import type { DictionaryField, ScheduledEvent, StoredRecord } from '../store/types.js';
import { recordNotFound, someOf } from './tool-errors.js';

const Args = z.object({
  record_id: z.string().trim().min(1, 'name the record (subject id), e.g. "S001"').describe('the record (subject) id'),
  event: z.string().trim().min(1, 'name the event, e.g. "v2_arm_1"').describe('REDCap unique event name of the visit, e.g. "v2_arm_1" (get_project_stats lists them)'),
  date_field: z.string().min(1).optional().describe('the date field holding the visit date; found by name (visit_date, ...) when absent'),
});
type Args = z.infer<typeof Args>;

/** Field names that hold a visit's date in REDCap projects and CDISC-minded CRFs. */
const VISIT_DATE = /visit|^vis_?(date|dt|dat)$|^svstdtc?$/i;
/** Day 0 of the schedule, as the demo rules count windows (`in_window` against v1_arm_1.enrollment_date). */
const ENROLMENT_DATE = /enrol|random|^rand_?(date|dt)$/i;
const CONSENT_DATE = /consent|^icf/i;

type Anchor = { source: 'enrolment date' | 'first visit date' | 'consent date'; field: string; event: string; date: string; day0: IsoDate };

/**
 * Whether a visit happened inside its window, counted the way the QC rules count it (trial/rules
 * visit-window-operator): calendar days from the anchor (day 0, the enrolment date) to the visit date, against
 * the event's day offset and the days allowed before and after (REDCap's day_offset, offset_min, offset_max).
 * Without an enrolment date the first visit of the arm is day (its offset), then the consent date is day 0.
 * Missing data is an answer naming exactly what is missing, not a failed call: the model reports it.
 */
export function visitWindowTool(db: Db, projectId: string): ToolDefinition<Args> {
  return {
    name: 'check_visit_window',
    description:
      "Check whether a subject's visit (one event) fell inside its protocol window: target day, allowed day range, actual day from enrolment, in_window, days early or late. Says exactly which data is missing when it cannot tell.",
    schema: Args,
    async run({ record_id: recordId, event, date_field: dateField }) {
      const [schedule, rows, dictionary, mask] = await Promise.all([getEvents(db, projectId), getRecord(db, projectId, recordId), getDictionary(db, projectId), identifierMask(db, projectId, undefined)]);
      const unknown = (missing: string, message: string) => ({ record_id: recordId, event, in_window: null, missing, message });
      if (rows.length === 0) throw recordNotFound(recordId);
      if (schedule.length === 0) {
        return unknown('visit schedule', 'This project has no visit schedule: no events were imported, so there are no windows to check. Import the REDCap events export with day_offset, offset_min and offset_max (POST /api/iit/projects/:projectId/imports, part "events").');
      }
      const target = schedule.find((e) => e.eventName === event);
      if (!target) throw new ClinAgentError('VALIDATION_FAILED', `event ${JSON.stringify(event)} is not in this project's schedule; events are ${someOf(schedule.map((e) => e.eventName), 30)}.`, { field: 'event' });
      const arm = schedule.filter((e) => e.armNum === target.armNum);
      if (arm.every((e) => e.dayOffset === 0 && e.windowBefore === 0 && e.windowAfter === 0)) {
        return unknown('visit windows', `The schedule has no visit windows: every event of arm ${target.armNum} is day 0 with no days allowed before or after (the events export had no day_offset, offset_min and offset_max; REDCap exports them when scheduling is enabled). Import an events file with them to check windows.`);
      }

      const dateFields = dictionary.filter((f) => (f.fieldType === 'date' || f.fieldType === 'datetime') && !mask.isIdentifier(f.fieldName));
      const visitField = pickVisitField(dictionary, dateFields, dateField, mask.isIdentifier);
      if (typeof visitField !== 'string') return unknown('visit date field', visitField.problem);

      const row = rows.find((r) => r.eventName === event);
      if (!row) return unknown('visit data', `Record ${recordId} has no data at ${event} (${target.label}): the visit is not entered yet, so its date is unknown.`);
      const visitDate = dateOf(row, visitField);
      if (!visitDate.ok) return unknown('visit date', `Record ${recordId} has ${visitDate.problem} in ${visitField} at ${event} (${target.label}), so the window cannot be checked.`);

      const anchor = findAnchor(rows, arm, dateFields, visitField);
      if ('problem' in anchor) return unknown('anchor date', `Record ${recordId} has no day-0 date to count from: ${anchor.problem}.`);

      const actualDay = daysBetween(anchor.day0, visitDate.date);
      const fromDay = target.dayOffset - target.windowBefore;
      const toDay = target.dayOffset + target.windowAfter;
      return {
        record_id: recordId,
        event,
        event_label: target.label,
        visit_date_field: visitField,
        visit_date: visitDate.text,
        anchor: { source: anchor.source, field: anchor.field, event: anchor.event || null, date: anchor.date },
        target_day: target.dayOffset,
        window: `day ${target.dayOffset} -${target.windowBefore}/+${target.windowAfter}`,
        allowed_range: { from_day: fromDay, to_day: toDay },
        actual_day: actualDay,
        in_window: actualDay >= fromDay && actualDay <= toDay,
        days_early: Math.max(0, fromDay - actualDay),
        days_late: Math.max(0, actualDay - toDay),
      };
    },
  };
}

function pickVisitField(dictionary: DictionaryField[], dateFields: DictionaryField[], requested: string | undefined, isIdentifier: (field: string) => boolean): string | { problem: string } {
  if (requested !== undefined) {
    if (isIdentifier(requested)) return { problem: `${requested} is an identifier field; its dates are never read for the assistant. Name the visit date field instead.` };
    if (dateFields.some((f) => f.fieldName === requested)) return requested;
    const known = dictionary.some((f) => f.fieldName === requested);
    return { problem: `${requested} ${known ? 'is not a date field' : 'is not in the data dictionary'}; date fields are ${someOf(dateFields.map((f) => f.fieldName))}.` };
  }
  const found = dateFields.find((f) => VISIT_DATE.test(f.fieldName));
  if (found) return found.fieldName;
  return { problem: `No visit date field found: no date field of the dictionary is named like visit_date. Date fields are ${someOf(dateFields.map((f) => f.fieldName))}; call again with date_field set to the one holding the visit date.` };
}

type DateValue = { ok: true; text: string; date: IsoDate } | { ok: false; problem: string };

function dateOf(row: StoredRecord, field: string): DateValue {
  const value = row.data[field];
  if (value === null || value === undefined || String(value).trim() === '') return { ok: false, problem: 'no value' };
  const date = parseIsoDate(String(value).trim());
  if (!date) return { ok: false, problem: `"${String(value)}", which is not a date (YYYY-MM-DD),` };
  return { ok: true, text: String(value).trim(), date };
}

/** The first usable date of `fields` in the record's rows of this arm, schedule order first. */
function firstDate(rows: StoredRecord[], fields: DictionaryField[]): { field: string; event: string; text: string; date: IsoDate } | undefined {
  for (const field of fields) {
    for (const row of rows) {
      const value = dateOf(row, field.fieldName);
      if (value.ok) return { field: field.fieldName, event: row.eventName, text: value.text, date: value.date };
    }
  }
  return undefined;
}

function findAnchor(rows: StoredRecord[], arm: ScheduledEvent[], dateFields: DictionaryField[], visitField: string): Anchor | { problem: string } {
  const armEvents = new Set(arm.map((e) => e.eventName));
  const armRows = rows.filter((r) => armEvents.has(r.eventName));
  const enrolmentFields = dateFields.filter((f) => ENROLMENT_DATE.test(f.fieldName));
  const enrolment = firstDate(armRows, enrolmentFields);
  if (enrolment) return { source: 'enrolment date', field: enrolment.field, event: enrolment.event, date: enrolment.text, day0: enrolment.date };

  // The first scheduled visit is day `dayOffset` (normally 0); day 0 is that many days before it.
  const first = [...arm].sort((a, b) => a.dayOffset - b.dayOffset)[0]!;
  const firstRow = armRows.find((r) => r.eventName === first.eventName);
  const firstVisit = firstRow ? dateOf(firstRow, visitField) : undefined;
  if (firstVisit?.ok) {
    const day0 = { ...firstVisit.date, epochDay: firstVisit.date.epochDay - first.dayOffset };
    return { source: 'first visit date', field: visitField, event: first.eventName, date: firstVisit.text, day0 };
  }

  const consent = firstDate(armRows, dateFields.filter((f) => CONSENT_DATE.test(f.fieldName)));
  if (consent) return { source: 'consent date', field: consent.field, event: consent.event, date: consent.text, day0: consent.date };

  const looked = [
    enrolmentFields.length ? `no ${enrolmentFields.map((f) => f.fieldName).join(' or ')} value` : 'no enrolment date field in the dictionary',
    `no ${visitField} at the first visit ${first.eventName}`,
    'no consent date',
  ];
  return { problem: looked.join(', ') };
}
