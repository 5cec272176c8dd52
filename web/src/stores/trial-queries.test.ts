import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, type DataQuery, type DataQueryPage, type ViolationsReport } from '../api';
import { useTrialQueriesStore } from './trial-queries';

const counts = { held: 0, open: 3, answered: 1, closed: 0, reopened: 0, cancelled: 0 };
const page = (queries: string[], extra: Partial<DataQueryPage> = {}): DataQueryPage => ({ queries: queries.map((id) => ({ id }) as DataQuery), total: 4, page: 1, pageSize: 50, counts, ...extra });

describe('the query list store', () => {
  let pageQueries: ReturnType<typeof vi.spyOn>;

  beforeEach(() => {
    useTrialQueriesStore.getState().reset();
    pageQueries = vi.spyOn(api.trial, 'pageQueries').mockImplementation(async (_projectId, _filters, paging) => page(['a', 'b'], { page: paging?.page ?? 1 }));
    vi.spyOn(api.trial, 'getReport').mockResolvedValue({ total: 4 } as ViolationsReport);
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('asks the server for the page, sort and filters shown, and keeps its total and counts', async () => {
    const store = useTrialQueriesStore.getState();
    await store.load('p1');
    expect(useTrialQueriesStore.getState()).toMatchObject({ total: 4, counts, queries: [{ id: 'a' }, { id: 'b' }] });
    await store.setPage('p1', 3);
    await store.sortBy('p1', 'site');
    expect(pageQueries).toHaveBeenLastCalledWith('p1', {}, { page: 1, pageSize: 50, sort: 'site', order: 'asc' });
    await store.sortBy('p1', 'site');
    expect(pageQueries).toHaveBeenLastCalledWith('p1', {}, { page: 1, pageSize: 50, sort: 'site', order: 'desc' });
    await store.setPage('p1', 2);
    await store.setFilters('p1', { status: 'open', site: '' });
    expect(pageQueries).toHaveBeenLastCalledWith('p1', { status: 'open' }, { page: 1, pageSize: 50, sort: 'site', order: 'desc' });
  });

  it('keeps ticks across pages, drops them with a new filter, and closes them with one reason', async () => {
    const bulkClose = vi.spyOn(api.trial, 'bulkCloseQueries').mockResolvedValue({ closed: 1, skipped: [{ id: 'b', status: 'closed', recordId: 'S002', eventName: '', field: 'age', why: 'The query on record S002, age is closed: it can go to reopened, not closed.' }] });
    const store = useTrialQueriesStore.getState();
    await store.load('p1');
    store.select(['a', 'b'], true);
    await store.setPage('p1', 2);
    expect(useTrialQueriesStore.getState().selected).toEqual(['a', 'b']);
    expect(await store.bulkClose('p1', '   ')).toBe(false);
    expect(bulkClose).not.toHaveBeenCalled();
    const calls = pageQueries.mock.calls.length;
    expect(await store.bulkClose('p1', ' duplicates ')).toBe(true);
    expect(bulkClose).toHaveBeenCalledWith('p1', ['a', 'b'], 'duplicates');
    expect(useTrialQueriesStore.getState()).toMatchObject({ selected: [], isBulkClosing: false, bulkCloseResult: { closed: 1 } });
    expect(pageQueries.mock.calls.length).toBe(calls + 1);

    store.select(['a'], true);
    await store.setFilters('p1', { site: 'SITE-01' });
    expect(useTrialQueriesStore.getState()).toMatchObject({ selected: [], bulkCloseResult: null });
  });
});
