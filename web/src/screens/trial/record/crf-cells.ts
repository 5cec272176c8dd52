import type { CrfField, CrfValue, DataQuery, QueryStatus, RecordCrf } from '../../../api';

/** Notes longer than this fold behind "show more", so one long lab comment does not stretch a whole visit row. */
export const FOLD_AFTER_CHARS = 120;

/** Statuses that still ask something of the site (or will, once a review sends them): these flag a cell. */
const LIVE_STATUSES: ReadonlySet<QueryStatus> = new Set(['held', 'open', 'answered', 'reopened']);
export const isLiveQuery = (query: Pick<DataQuery, 'status'>) => LIVE_STATUSES.has(query.status);

/** Yes/no and true/false fields carry no choices in the dictionary; REDCap stores 1 and 0. */
export interface BooleanLabels {
  yes: string;
  no: string;
  true: string;
  false: string;
}

/**
 * A value as the CRF shows it: a coded value as "Label (code)", a checkbox as its checked labels, anything else as
 * entered. '' for no value. A code the dictionary does not list is shown as the bare code rather than hidden.
 */
export function displayValue(field: Pick<CrfField, 'type' | 'choices'>, value: CrfValue | undefined, labels: BooleanLabels): string {
  if (value === undefined || value === null || value === '') return '';
  const labelOf = (code: string) => {
    const choice = field.choices.find((c) => c.code === code);
    return choice ? `${choice.label} (${code})` : code;
  };
  if (Array.isArray(value)) return value.map((code) => field.choices.find((c) => c.code === code)?.label ?? code).join('; ');
  const text = String(value);
  if (field.type === 'yesno' && (text === '1' || text === '0')) return `${text === '1' ? labels.yes : labels.no} (${text})`;
  if (field.type === 'truefalse' && (text === '1' || text === '0')) return `${text === '1' ? labels.true : labels.false} (${text})`;
  if (field.choices.length > 0) return labelOf(text);
  return text;
}

/** A checkbox with nothing checked is an answer ("none of these"), not a missing value. */
export const isFilled = (value: CrfValue | undefined) => value !== undefined && value !== null && value !== '';

/** The record's queries on each cell, keyed by cellKey; ids the view does not hold are left out. */
export function queriesByCell(crf: RecordCrf, queries: DataQuery[]): Map<string, DataQuery[]> {
  const byId = new Map(queries.map((query) => [query.id, query]));
  const cells = new Map<string, DataQuery[]>();
  for (const cell of crf.queryCells) {
    const found = cell.queryIds.flatMap((id) => byId.get(id) ?? []);
    if (found.length) cells.set(cellKey(cell.eventName, cell.field), found);
  }
  return cells;
}

export const cellKey = (eventName: string, field: string) => JSON.stringify([eventName, field]);

/**
 * Whether a field's row is shown while empty fields are hidden: it has a value in some visit, is masked (a hidden
 * value is not an empty one), or carries a query (a query on a missing value is about that emptiness).
 */
export function isRowShown(crf: RecordCrf, field: string, cells: Map<string, DataQuery[]>): boolean {
  if (crf.maskedFields.includes(field)) return true;
  return crf.events.some((event) => isFilled(crf.values[event.eventName]?.[field]) || cells.has(cellKey(event.eventName, field)));
}
