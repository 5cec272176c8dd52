import { parseIsoDate } from '../iso-date.js';

export type DateFormat = 'ymd' | 'mdy' | 'dmy';

const EXAMPLE: Readonly<Record<DateFormat, string>> = { ymd: '2024-11-01', mdy: '11-01-2024', dmy: '01-11-2024' };
const SHAPE: Readonly<Record<DateFormat, string>> = { ymd: 'YYYY-MM-DD', mdy: 'MM-DD-YYYY', dmy: 'DD-MM-YYYY' };

// Date parts separated by "-" or "/" (one kind in a date), an optional time after a space or a T.
const PARTS = /^(\d{1,4})([-/])(\d{1,2})\2(\d{1,4})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?))?$/;

/** "ymd", "Y-M-D", "MDY": the format a datediff's fourth argument names, or undefined for anything else. */
export function dateFormatOf(text: string): DateFormat | undefined {
  const format = text.toLowerCase().replaceAll('-', '');
  return format === 'ymd' || format === 'mdy' || format === 'dmy' ? format : undefined;
}

/**
 * A date written in REDCap logic, in the format datediff names ("01-11-2024" is 11 January under "mdy", 1 November
 * under "dmy"), as the ISO date the engine reads; fields are stored as Y-M-D whatever the format says, so only
 * literals are read this way. Undefined when the text is not a valid date in that format; `expected` says what is.
 */
export function literalDateToIso(text: string, format: DateFormat): string | undefined {
  const match = PARTS.exec(text.trim());
  if (!match) return undefined;
  const [, first, , second, third, time] = match as unknown as [string, string, string, string, string, string | undefined];
  const [year, month, day] = format === 'ymd' ? [first, second, third] : format === 'mdy' ? [third, first, second] : [third, second, first];
  if (year.length !== 4) return undefined;
  const iso = `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}${time === undefined ? '' : `T${time.padStart(time.indexOf(':') === 1 ? time.length + 1 : time.length, '0')}`}`;
  return parseIsoDate(iso) === null ? undefined : iso;
}

/** How a literal date must be written under `format`, for the error that refuses one. */
export function expectedDate(format: DateFormat): string {
  return `${SHAPE[format]}, e.g. "${EXAMPLE[format]}"`;
}
