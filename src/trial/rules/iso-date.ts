/**
 * ISO 8601 dates for the clinical operators. Parsing is ours, not `Date.parse`, because `Date.parse` accepts
 * non-ISO text ("March 7"), rolls invalid days over (2023-02-29 becomes March 1) and reads a datetime without
 * an offset in the server's time zone, so the same rule would give different answers on different servers.
 */
export interface IsoDate {
  /** Days since 1970-01-01 of the calendar date as written, i.e. in the value's own offset. */
  readonly epochDay: number;
  /** Milliseconds since the epoch (UTC). A plain date counts as its midnight UTC. */
  readonly instantMs: number;
  /** False for a plain `YYYY-MM-DD`. */
  readonly hasTime: boolean;
}

const MS_PER_DAY = 86_400_000;

// YYYY-MM-DD, optionally followed by T (or a space, as many EDC exports write it) and hh:mm[:ss[.fff]][offset].
const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** The parsed date, or null when `value` is not a valid ISO date or datetime (missing values included). */
export function parseIsoDate(value: unknown): IsoDate | null {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? null : { epochDay: Math.floor(ms / MS_PER_DAY), instantMs: ms, hasTime: true };
  }
  if (typeof value !== 'string') return null;
  const match = ISO_PATTERN.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  const epochDay = epochDayOf(year, month, day);
  if (h === undefined) return { epochDay, instantMs: epochDay * MS_PER_DAY, hasTime: false };

  const hours = Number(h);
  const minutes = Number(mi);
  const seconds = s === undefined ? 0 : Number(s);
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  const offsetMinutes = parseOffsetMinutes(offset);
  if (offsetMinutes === null) return null;
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const instantMs = epochDay * MS_PER_DAY + ((hours * 60 + minutes - offsetMinutes) * 60 + seconds) * 1000 + millis;
  return { epochDay, instantMs, hasTime: true };
}

/** Offset east of UTC in minutes; a datetime without one is read as UTC so results never depend on the server. */
function parseOffsetMinutes(offset: string | undefined): number | null {
  if (offset === undefined || offset === 'Z' || offset === 'z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return null;
  return sign * (hours * 60 + minutes);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function epochDayOf(year: number, month: number, day: number): number {
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return Math.round(date.getTime() / MS_PER_DAY);
}
