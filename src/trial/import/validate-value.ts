import type { FieldType } from '../../core/db/schema/trial.js';
import type { RecordValue, TrialField } from '../store/types.js';
import { IMPLICIT_CHOICES } from './redcap-field-type.js';
import { quote } from './problems.js';

const INTEGER = /^[-+]?\d+$/;
// REDCap's "number_comma_decimal" types export "1,5"; a cell never holds a thousands separator.
const NUMBER = /^[-+]?(\d+([.,]\d*)?|[.,]\d+)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(:(\d{2}))?$/;

/** Bounds REDCap evaluates at entry time; an import cannot check them against the day of data entry. */
const RELATIVE_BOUNDS = new Set(['today', 'now']);

/** A value outside the dictionary's validation min/max: which side, and the text of the bound. */
export interface OutOfRange {
  side: 'below' | 'above';
  bound: string;
}

/**
 * A converted value, with `outOfRange` when it lies outside the field's validation bounds; or a problem
 * that makes the cell unusable (wrong type, impossible date, unknown code).
 */
export type CellCheck = { value: RecordValue; outOfRange?: OutOfRange } | { problem: string };

/**
 * Checks one cell against its field and converts it: numbers for integer and number fields, the code (as
 * text) for choice fields, text for the rest. A blank cell is null and never a problem: missing data is
 * what QC reports, not a reason to refuse a file. A value outside the validation min/max is not a problem
 * either: REDCap lets staff save it after a warning, so it is real data that QC must see and query.
 */
export function validateValue(field: TrialField, raw: string): CellCheck {
  const text = raw.trim();
  if (text === '') return { value: null };
  // PostgreSQL cannot store U+0000 in jsonb; refusing it here names the cell instead of failing the write.
  if (text.includes('\u0000')) return { problem: `${quote(raw.replaceAll('\u0000', '\\0'))} contains a NUL character; remove it` };
  const typed = convert(field.fieldType, text, field);
  if ('problem' in typed) return typed;
  const outOfRange = outsideBounds(field, typed.value);
  return outOfRange ? { ...typed, outOfRange } : typed;
}

function convert(type: FieldType, text: string, field: TrialField): CellCheck {
  switch (type) {
    case 'integer':
      return INTEGER.test(text) ? { value: Number(text) } : { problem: `${quote(text)} is not an integer` };
    case 'number':
      return NUMBER.test(text) ? { value: Number(text.replace(',', '.')) } : { problem: `${quote(text)} is not a number` };
    case 'date':
      return isDate(text) ? { value: text } : { problem: `${quote(text)} is not a date in YYYY-MM-DD form (REDCap's raw export format)` };
    case 'datetime':
      return isDateTime(text) ? { value: text.replace('T', ' ') } : { problem: `${quote(text)} is not a date and time in YYYY-MM-DD HH:MM form` };
    case 'dropdown':
    case 'radio':
    case 'yesno':
    case 'truefalse':
      return checkChoice(text, choicesOf(field));
    case 'checkbox':
      // A checkbox field has one column per choice ("field___code"), each 0 or 1.
      return text === '0' || text === '1' ? { value: text } : { problem: `${quote(text)} is not 0 or 1 (unchecked or checked)` };
    case 'calc':
      // Calculated by REDCap; numeric results become numbers, @CALCTEXT results stay text.
      return { value: NUMBER.test(text) ? Number(text.replace(',', '.')) : text };
    case 'text':
    case 'notes':
    // An upload is stored by its file name, as REDCap's CSV export gives it; the content is never imported.
    case 'file':
      return { value: text };
  }
}

function choicesOf(field: TrialField): Array<{ code: string; label: string }> {
  return field.choices.length > 0 ? field.choices : (IMPLICIT_CHOICES[field.fieldType] ?? []);
}

function checkChoice(text: string, choices: ReadonlyArray<{ code: string; label: string }>): CellCheck {
  if (choices.some((choice) => choice.code === text)) return { value: text };
  const codes = choices.map((choice) => choice.code).join(', ');
  // The usual cause: the export was made with "labels" instead of "raw" data. Bilingual labels ("男 Male")
  // export whole, but a hand-edited sheet may carry one language, so single words of a label count too.
  const wanted = text.toLowerCase();
  const byLabel = choices.find((choice) => {
    const label = choice.label.toLowerCase();
    return label === wanted || label.split(/\s+/).includes(wanted);
  });
  if (byLabel) return { problem: `${quote(text)} is a choice label, not a code (expected ${codes}); export raw data, not labels` };
  return { problem: `${quote(text)} is not one of the choice codes ${codes}` };
}

/** The violated bound, or undefined when the value is within bounds (or the field has none). */
function outsideBounds(field: TrialField, value: RecordValue): OutOfRange | undefined {
  const min = boundOf(field.fieldType, field.validationMin);
  const max = boundOf(field.fieldType, field.validationMax);
  if (value === null) return undefined;
  if (min !== undefined && value < min) return { side: 'below', bound: field.validationMin!.trim() };
  if (max !== undefined && value > max) return { side: 'above', bound: field.validationMax!.trim() };
  return undefined;
}

/**
 * A dictionary bound converted to the field's value type, so dates compare as ISO text and numbers as
 * numbers. Undefined when the field has none, it is relative ("today"), or the type has no order.
 */
export function boundOf(type: FieldType, bound: string | null): number | string | undefined {
  const text = bound?.trim();
  if (!text || RELATIVE_BOUNDS.has(text.toLowerCase())) return undefined;
  if (type === 'integer' || type === 'number') return NUMBER.test(text) ? Number(text.replace(',', '.')) : undefined;
  if (type === 'date') return isDate(text) ? text : undefined;
  if (type === 'datetime') return isDateTime(text) ? text.replace('T', ' ') : isDate(text) ? text : undefined;
  return undefined;
}

/** Whether a dictionary bound is usable for the type; relative bounds and text fields accept anything. */
export function isValidBound(type: FieldType, bound: string): boolean {
  const text = bound.trim();
  if (!text || RELATIVE_BOUNDS.has(text.toLowerCase())) return true;
  if (type === 'integer' || type === 'number' || type === 'date' || type === 'datetime') return boundOf(type, text) !== undefined;
  return true;
}

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  return match !== null && isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

function isDateTime(text: string): boolean {
  const match = DATETIME.exec(text);
  if (!match) return false;
  const [hours, minutes, seconds] = [Number(match[4]), Number(match[5]), Number(match[7] ?? 0)];
  return isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3])) && hours < 24 && minutes < 60 && seconds < 60;
}

/** Rejects 2025-02-30: Date.UTC would silently roll it over to March. */
function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
