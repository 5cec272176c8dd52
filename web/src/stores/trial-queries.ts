import { create } from 'zustand';
import { api, ApiError, type AuditEntry, type BulkCloseQueriesResponse, type DataQuery, type QueryFilters, type QuerySortColumn, type QueryStatus, type QueryTransition, type ViolationsReport } from '../api';
import { saveFile } from '../components/save-file';
import { DEFAULT_QUERY_PAGING, nextSort, setSelected, type QueryPaging } from './query-paging';

export type QueryHistory = { status: 'loading' } | { status: 'loaded'; entries: AuditEntry[] } | { status: 'error'; error: unknown };

interface TrialQueriesState {
  projectId: string | null;
  filters: QueryFilters;
  /** Page, page size and sort of the list; the server pages, so any query of any size of trial is reachable. */
  paging: QueryPaging;
  /** The page shown. */
  queries: DataQuery[];
  /** Matching queries over all pages. */
  total: number;
  /** Per status, for the filters but the status: the status chips. */
  counts: Partial<Record<QueryStatus, number>>;
  /** Ticked query ids, kept across pages until the filters change or a bulk close ends. */
  selected: string[];
  isBulkClosing: boolean;
  /** The last bulk close: how many closed, and the ones skipped with why. */
  bulkCloseResult: BulkCloseQueriesResponse | null;
  bulkCloseError: unknown;
  report: ViolationsReport | null;
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** The query whose transition is being saved. */
  savingQueryId: string | null;
  /** The last failed transition, shown above the table with the server's message. */
  transitionError: unknown;
  /** Audit trail per query id, loaded when a row's history is opened. */
  history: Record<string, QueryHistory>;
  downloading: 'csv' | 'xlsx' | null;
  downloadError: unknown;
  load(projectId: string): Promise<void>;
  setFilters(projectId: string, filters: QueryFilters): Promise<void>;
  setPage(projectId: string, page: number): Promise<void>;
  setPageSize(projectId: string, pageSize: number): Promise<void>;
  /** A click on a sortable header. */
  sortBy(projectId: string, column: QuerySortColumn): Promise<void>;
  select(ids: readonly string[], isSelected: boolean): void;
  /** Resolves true when the request went through (some may still be skipped: see `bulkCloseResult`). */
  bulkClose(projectId: string, reason: string): Promise<boolean>;
  /** Resolves true when the query moved; false when the server refused (the error is in `transitionError`). */
  transition(projectId: string, queryId: string, to: QueryTransition, comment: string): Promise<boolean>;
  loadHistory(projectId: string, queryId: string): Promise<void>;
  download(projectId: string, format: 'csv' | 'xlsx'): Promise<void>;
  reset(): void;
}

const INITIAL = {
  projectId: null,
  filters: {},
  paging: DEFAULT_QUERY_PAGING,
  queries: [],
  total: 0,
  counts: {},
  selected: [],
  isBulkClosing: false,
  bulkCloseResult: null,
  bulkCloseError: null,
  report: null,
  hasLoaded: false,
  isLoading: false,
  error: null,
  savingQueryId: null,
  transitionError: null,
  history: {},
  downloading: null,
  downloadError: null,
} satisfies Partial<TrialQueriesState>;

/** Drops empty filter values so the URL carries only the filters the user set. */
function cleanFilters(filters: QueryFilters): QueryFilters {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined && value !== '')) as QueryFilters;
}

export const useTrialQueriesStore = create<TrialQueriesState>()((set, get) => {
  // Filters change faster than the server answers; only the newest answer may land on screen.
  let latestRequest = 0;

  async function fetchList(projectId: string): Promise<void> {
    const request = ++latestRequest;
    set({ isLoading: true, error: null });
    try {
      // The report counts every query of the project, so the summary stays put while the list is filtered.
      const [page, report] = await Promise.all([api.trial.pageQueries(projectId, get().filters, get().paging), api.trial.getReport(projectId)]);
      if (request === latestRequest) set({ queries: page.queries, total: page.total, counts: page.counts, report, hasLoaded: true });
    } catch (error) {
      if (request === latestRequest) set({ error });
    } finally {
      if (request === latestRequest) set({ isLoading: false });
    }
  }

  function switchProject(projectId: string): void {
    if (get().projectId !== projectId) set({ ...INITIAL, projectId });
  }

  return {
    ...INITIAL,

    async load(projectId) {
      switchProject(projectId);
      await fetchList(projectId);
    },

    async setFilters(projectId, filters) {
      switchProject(projectId);
      // Another filter is another list: back to its first page, and nothing ticked that may not be in it.
      set((state) => ({ filters: cleanFilters(filters), paging: { ...state.paging, page: 1 }, selected: [], bulkCloseResult: null }));
      await fetchList(projectId);
    },

    async setPage(projectId, page) {
      switchProject(projectId);
      set((state) => ({ paging: { ...state.paging, page } }));
      await fetchList(projectId);
    },

    async setPageSize(projectId, pageSize) {
      switchProject(projectId);
      set((state) => ({ paging: { ...state.paging, pageSize, page: 1 } }));
      await fetchList(projectId);
    },

    async sortBy(projectId, column) {
      switchProject(projectId);
      set((state) => ({ paging: nextSort(state.paging, column) }));
      await fetchList(projectId);
    },

    select(ids, isSelected) {
      set((state) => ({ selected: setSelected(state.selected, ids, isSelected) }));
    },

    async bulkClose(projectId, reason) {
      const { selected, isBulkClosing } = get();
      if (isBulkClosing || selected.length === 0 || !reason.trim()) return false;
      set({ isBulkClosing: true, bulkCloseError: null, bulkCloseResult: null });
      try {
        const result = await api.trial.bulkCloseQueries(projectId, selected, reason.trim());
        // Closed queries have new history entries; drop what was cached so an open history reloads.
        const touched = new Set(selected);
        set((state) => ({ bulkCloseResult: result, selected: [], history: Object.fromEntries(Object.entries(state.history).filter(([id]) => !touched.has(id))) }));
        await fetchList(projectId);
        return true;
      } catch (bulkCloseError) {
        set({ bulkCloseError });
        return false;
      } finally {
        set({ isBulkClosing: false });
      }
    },

    async transition(projectId, queryId, to, comment) {
      if (get().savingQueryId) return false;
      set({ savingQueryId: queryId, transitionError: null });
      try {
        const updated = await api.trial.transitionQuery(projectId, queryId, to, comment.trim());
        set((state) => ({
          queries: state.queries.map((query) => (query.id === queryId ? { ...query, ...updated } : query)),
          // The history of a moved query has a new entry; drop it so an open history reloads.
          history: Object.fromEntries(Object.entries(state.history).filter(([id]) => id !== queryId)),
        }));
        void fetchList(projectId);
        return true;
      } catch (transitionError) {
        set({ transitionError });
        // Someone moved the query first: show where it is now, as the server's message asks.
        if (transitionError instanceof ApiError && transitionError.code === 'CONFLICT_STATE') void fetchList(projectId);
        return false;
      } finally {
        set({ savingQueryId: null });
      }
    },

    async loadHistory(projectId, queryId) {
      set((state) => ({ history: { ...state.history, [queryId]: { status: 'loading' } } }));
      try {
        const entries = await api.trial.listAudit(projectId, { entityType: 'query', entityId: queryId });
        set((state) => ({ history: { ...state.history, [queryId]: { status: 'loaded', entries } } }));
      } catch (error) {
        set((state) => ({ history: { ...state.history, [queryId]: { status: 'error', error } } }));
      }
    },

    async download(projectId, format) {
      if (get().downloading) return;
      set({ downloading: format, downloadError: null });
      try {
        const file = await api.trial.downloadReport(projectId, format);
        saveFile(file.blob, file.filename ?? `${projectId}-violations.${format}`);
      } catch (downloadError) {
        set({ downloadError });
      } finally {
        set({ downloading: null });
      }
    },

    reset() {
      latestRequest += 1;
      set({ ...INITIAL });
    },
  };
});
