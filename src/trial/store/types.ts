import type { FieldType } from '../../core/db/schema/trial.js';

/**
 * The trial's data model in REDCap's flat shape. Both sources (REDCap API, CSV export) produce these
 * shapes, and the store keeps them, so QC code never needs to know where a record came from.
 */

/** One data-dictionary field. `ordinal` is its position in the dictionary, kept by the store. */
export interface TrialField {
  fieldName: string;
  formName: string;
  fieldType: FieldType;
  label: string;
  /** Codes and labels of dropdown, radio and checkbox fields; empty otherwise. */
  choices: Array<{ code: string; label: string }>;
  /** Text as in the dictionary: a number for integer/number fields, YYYY-MM-DD[ HH:MM] for dates. */
  validationMin: string | null;
  validationMax: string | null;
  required: boolean;
  /**
   * REDCap's "Identifier?" flag (names, phone numbers, addresses, dates of birth): such values are kept away
   * from models and traces. Absent means false; the store always returns it.
   */
  identifier?: boolean;
}

/** A field as the store returns it: the identifier flag is always present. */
export type DictionaryField = TrialField & { identifier: boolean };

/** One event of the visit schedule; the window is in days around `dayOffset` from enrolment (day 0). */
export interface TrialEvent {
  eventName: string;
  label: string;
  dayOffset: number;
  windowBefore: number;
  windowAfter: number;
  /** REDCap arm (`arm_num`) the event belongs to. Absent means 1; the store always returns it. */
  armNum?: number;
}

/** An event as the store returns it: the arm is always present. */
export type ScheduledEvent = TrialEvent & { armNum: number };

/** A REDCap arm (`arm.csv` or API content=arm): a group of subjects with its own schedule. */
export interface TrialArm {
  armNum: number;
  name: string;
}

/** Integer and number fields hold numbers; codes, dates and text hold strings; a blank cell is null. */
export type RecordValue = string | number | null;

/** One row of REDCap's flat export: a subject (record id) at one event, with that row's field values. */
export interface TrialRecord {
  recordId: string;
  eventName: string;
  /** REDCap data access group; '' when the project has none. */
  site: string;
  data: Record<string, RecordValue>;
}

export interface StoredRecord extends TrialRecord {
  /** Bumped on every change, so a QC result can say which version of the record it checked. */
  version: number;
  updatedAt: string;
}

export type { AuditEntityType, AuditEntry, AuditEntryInput } from '../../core/audit/audit-log.js';
