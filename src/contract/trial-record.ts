import { z } from 'zod';

/** One choice of a dropdown, radio or checkbox field: the code stored in the data and the label a site reads. */
export const CrfChoice = z.object({ code: z.string(), label: z.string() });
export type CrfChoice = z.infer<typeof CrfChoice>;

/** A field of the data dictionary as a CRF row shows it. */
export const CrfField = z.object({
  name: z.string().describe('the variable name, e.g. sbp'),
  label: z.string().describe('the field label of the dictionary'),
  type: z.string().describe('text, integer, number, date, datetime, dropdown, radio, checkbox, yesno, truefalse, calc, notes or file (an upload, held by its file name)'),
  identifier: z.boolean().describe('REDCap "Identifier?": masked for members without identifier access'),
  choices: z.array(CrfChoice).describe('codes and labels of dropdown, radio and checkbox fields, in dictionary order; empty otherwise'),
});
export type CrfField = z.infer<typeof CrfField>;

/** A form (instrument) with its fields in dictionary order. */
export const CrfForm = z.object({
  name: z.string().describe("the form name of the dictionary; '' for data fields the dictionary does not define"),
  label: z.string().describe('the form name made readable (demographics -> Demographics)'),
  fields: z.array(CrfField),
});
export type CrfForm = z.infer<typeof CrfForm>;

/** A visit column: one event of the record's arm, in the project's schedule order. */
export const CrfEvent = z.object({
  eventName: z.string().describe("the unique event name (baseline_arm_1); '' in a classic (non-longitudinal) trial"),
  label: z.string().describe("the event label of the schedule (Baseline); '' in a classic trial"),
  armNum: z.int().nullable().describe('the arm of the event; null when the event is not in the schedule'),
  armName: z.string().nullable(),
  hasData: z.boolean().describe('false for a scheduled visit the record has no row for yet'),
  site: z.string().nullable(),
  version: z.int().nullable(),
  updatedAt: z.string().nullable(),
});
export type CrfEvent = z.infer<typeof CrfEvent>;

/**
 * A checkbox field's value is the list of its checked codes; other fields keep the stored value (a number, a
 * string, or null for blank). Spelled out rather than built on trial-data's RecordValue: that file imports this one.
 */
export const CrfValue = z.union([z.string(), z.number(), z.null(), z.array(z.string())]);
export type CrfValue = z.infer<typeof CrfValue>;

/** The queries raised on one cell of the CRF. */
const CrfQueryCell = z.object({
  eventName: z.string(),
  field: z.string().describe('the dictionary field (a checkbox choice column names its checkbox field)'),
  queryIds: z.array(z.string()).describe('ids of the record view\'s queries on this cell'),
});
type CrfQueryCell = z.infer<typeof CrfQueryCell>;

/**
 * The record as a case report form: forms and fields in dictionary order, visits as columns, values per
 * (event, field), and the queries on each cell. Null when the project has no data dictionary (an old import).
 */
export const RecordCrf = z.object({
  forms: z.array(CrfForm),
  events: z.array(CrfEvent),
  values: z.record(z.string(), z.record(z.string(), CrfValue)).describe('by event name, then field name; <form>_complete holds the form status (0 incomplete, 1 unverified, 2 complete)'),
  maskedFields: z.array(z.string()).describe('identifier fields hidden from you: null in values, whatever was entered'),
  queryCells: z.array(CrfQueryCell),
});
export type RecordCrf = z.infer<typeof RecordCrf>;
