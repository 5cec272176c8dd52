import { asc, count, desc, sql, type AnyColumn, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { naturalRecordOrder } from '../store/record-order.js';
import { queryConditions, shownStatusSql, TRANSITIONS, withTransitions, type DataQuery, type QueryFilter, type QueryStatus } from '../queries.js';

export const QUERY_SORT_COLUMNS = ['createdAt', 'updatedAt', 'status', 'recordId', 'eventName', 'field', 'ruleId', 'site', 'severity'] as const;
export type QuerySortColumn = (typeof QUERY_SORT_COLUMNS)[number];
export type SortOrder = 'asc' | 'desc';

const DEFAULT_PAGE_SIZE = 50;
/** One page stays one screenful a browser renders at once; any row is still reachable by page number. */
export const MAX_PAGE_SIZE = 500;

export interface QueryPageRequest extends Omit<QueryFilter, 'limit' | 'offset'> {
  /** 1-based. */
  page?: number;
  pageSize?: number;
  sort?: QuerySortColumn;
  order?: SortOrder;
}

interface QueryPage {
  queries: DataQuery[];
  /** Matching queries over all pages. */
  total: number;
  page: number;
  pageSize: number;
  /** Per status, for the same filters except the status, so a console can show every status's count at once. */
  counts: Record<QueryStatus, number>;
}

// Severity and status sort by meaning, not spelling: alphabetically "info" would sit between "error" and
// "warning", and "answered" before "open". Ascending is the least severe first and the lifecycle's order.
const SEVERITY_RANK: Record<DataQuery['severity'], number> = { info: 0, warning: 1, error: 2 };
const STATUS_RANK: Record<QueryStatus, number> = { held: 0, open: 1, reopened: 2, answered: 3, closed: 4, cancelled: 5 };

/** CASE over constants of this file only (never request text), so the raw SQL carries no input. */
function rank(column: AnyColumn | SQL, ranks: Record<string, number>): SQL {
  const whens = Object.entries(ranks).map(([value, n]) => `WHEN '${value}' THEN ${n}`).join(' ');
  return sql`CASE ${column} ${sql.raw(whens)} END`;
}

const SORT_EXPRESSIONS: Record<Exclude<QuerySortColumn, 'recordId'>, AnyColumn | SQLWrapper> = {
  createdAt: pendingActions.createdAt,
  updatedAt: pendingActions.updatedAt,
  status: rank(shownStatusSql, STATUS_RANK),
  eventName: pendingActions.eventName,
  field: pendingActions.field,
  ruleId: pendingActions.ruleId,
  site: pendingActions.site,
  severity: rank(pendingActions.severity, SEVERITY_RANK),
};

/**
 * One page of a project's queries in a stable order: the chosen column, then the record (queries raised by one
 * run share a creation time), then the id, so every query appears on exactly one page however many tie. Records
 * go in natural order (2, 10, 16, 108), as a site numbers its subjects.
 */
function orderBy(sort: QuerySortColumn, order: SortOrder): SQL[] {
  const direction = order === 'asc' ? asc : desc;
  const keys = sort === 'recordId' ? naturalRecordOrder(pendingActions.recordId, order) : [direction(SORT_EXPRESSIONS[sort]), ...naturalRecordOrder(pendingActions.recordId)];
  keys.push(direction(pendingActions.id));
  return keys;
}

function assertWhole(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ClinAgentError('VALIDATION_FAILED', `${name} must be a whole number from ${min} to ${max}; got ${value}.`, { field: name });
  }
}

function emptyCounts(): Record<QueryStatus, number> {
  return Object.fromEntries(Object.keys(TRANSITIONS).map((status) => [status, 0])) as Record<QueryStatus, number>;
}

/** A page of queries with the total and the counts per status; any page of any size of trial is reachable. */
export async function pageQueries(db: Db, request: QueryPageRequest): Promise<QueryPage> {
  const { page = 1, pageSize = DEFAULT_PAGE_SIZE, sort = 'createdAt', order = 'desc', ...filter } = request;
  assertWhole('page', page, 1, Number.MAX_SAFE_INTEGER);
  assertWhole('pageSize', pageSize, 1, MAX_PAGE_SIZE);
  if (!QUERY_SORT_COLUMNS.includes(sort)) {
    throw new ClinAgentError('VALIDATION_FAILED', `Queries cannot be sorted by "${sort}". Sort by one of: ${QUERY_SORT_COLUMNS.join(', ')}.`, { field: 'sort' });
  }
  const counts = emptyCounts();
  const where = queryConditions(filter);
  const everyStatus = queryConditions({ ...filter, status: undefined });
  if (!where || !everyStatus) return { queries: [], total: 0, page, pageSize, counts };

  const [rows, perStatus] = await Promise.all([
    db.select().from(pendingActions).where(where).orderBy(...orderBy(sort, order)).limit(pageSize).offset((page - 1) * pageSize),
    db.select({ status: shownStatusSql, n: count() }).from(pendingActions).where(everyStatus).groupBy(shownStatusSql),
  ]);
  for (const { status, n } of perStatus) counts[status] = n;
  const total = filter.status ? counts[filter.status] : Object.values(counts).reduce((sum, n) => sum + n, 0);
  return { queries: rows.map(withTransitions), total, page, pageSize, counts };
}
