import type { QuerySortColumn } from '../api';

export type SortOrder = 'asc' | 'desc';

export interface QueryPaging {
  page: number;
  pageSize: number;
  sort: QuerySortColumn;
  order: SortOrder;
}

/** The server's defaults: newest first, 50 to a page. */
export const DEFAULT_QUERY_PAGING: QueryPaging = { page: 1, pageSize: 50, sort: 'createdAt', order: 'desc' };
export const QUERY_PAGE_SIZES = [25, 50, 100, 200, 500] as const;

// Dates and severity read best newest or most severe first; names and the lifecycle read best from the start.
const FIRST_ORDER: Record<QuerySortColumn, SortOrder> = {
  createdAt: 'desc',
  updatedAt: 'desc',
  severity: 'desc',
  status: 'asc',
  recordId: 'asc',
  eventName: 'asc',
  field: 'asc',
  ruleId: 'asc',
  site: 'asc',
};

/** A click on a column header: the same column flips its order, another starts at its natural order; page 1. */
export function nextSort(paging: QueryPaging, column: QuerySortColumn): QueryPaging {
  const order = paging.sort === column ? (paging.order === 'asc' ? 'desc' : 'asc') : FIRST_ORDER[column];
  return { ...paging, sort: column, order, page: 1 };
}

/** At least one page, so "page 1 of 1" shows for an empty list. */
export function pageCount(total: number, pageSize: number): number {
  return Math.max(1, Math.ceil(total / pageSize));
}

/** The 1-based rows a page shows ("51–100 of 646"); from is 0 when there are none. */
export function pageRows(page: number, pageSize: number, total: number): { from: number; to: number } {
  const from = Math.min((page - 1) * pageSize + 1, total + 1);
  const to = Math.min(page * pageSize, total);
  return to < from ? { from: 0, to: 0 } : { from, to };
}

/**
 * The selection after ticking (or clearing) `ids`: a header checkbox passes every row of the page, a row its
 * own id. The order of first selection is kept, so the request lists them as they were picked.
 */
export function setSelected(selected: readonly string[], ids: readonly string[], isSelected: boolean): string[] {
  if (!isSelected) {
    const drop = new Set(ids);
    return selected.filter((id) => !drop.has(id));
  }
  const have = new Set(selected);
  return [...selected, ...ids.filter((id) => !have.has(id) && have.add(id))];
}
