import { create } from 'zustand';
import { api, ApiError, type ReviewDecision, type ReviewOutcome, type TaskRun } from '../api';
import { pageCount } from './query-paging';

export const REVIEW_PAGE_SIZE = 50;

export type ReviewState =
  | { status: 'saving'; decision: ReviewDecision }
  | { status: 'decided'; decision: ReviewDecision }
  | { status: 'error'; error: unknown };

/** What a selection holds: a whole run (its every finding), or single findings of a run. */
export type Selection = Record<string, { whole: boolean; queryIds: string[] }>;

interface ReviewQueueState {
  projectId: string | null;
  /** One page of runs waiting at a review, oldest first, each with its findings (one request per page). */
  runs: TaskRun[];
  total: number;
  page: number;
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** Per run: a decision in flight, made, or refused. */
  reviews: Record<string, ReviewState>;
  /** Per finding (query id): the decision made on it from this page. */
  findingDecisions: Record<string, ReviewDecision>;
  selection: Selection;
  /** A decision the server refused because someone decided first or the data changed; shown above the refreshed queue. */
  conflict: ApiError | null;
  load(projectId: string, page?: number): Promise<void>;
  /**
   * One decision and comment over runs or single findings, in one request. Returns false when nothing was applied.
   * Refusals (decided elsewhere, data changed) reload the page and show why.
   */
  decide(projectId: string, decision: ReviewDecision, comment: string, selection: Selection): Promise<boolean>;
  toggleRun(taskRunId: string): void;
  toggleFinding(taskRunId: string, queryId: string): void;
  selectPage(selected: boolean): void;
  dismissConflict(): void;
  reset(): void;
}

const INITIAL = {
  projectId: null,
  runs: [],
  total: 0,
  page: 1,
  hasLoaded: false,
  isLoading: false,
  error: null,
  reviews: {},
  findingDecisions: {},
  selection: {},
  conflict: null,
} satisfies Partial<ReviewQueueState>;

/** Runs still waiting for a decision, for the queue count: the total over every page, less those decided here. */
export function waitingCount(state: Pick<ReviewQueueState, 'runs' | 'reviews' | 'total'>): number {
  return Math.max(0, state.total - state.runs.filter((run) => state.reviews[run.id]?.status === 'decided').length);
}

/** The findings of a run a reviewer decides: those its review holds back from the site. */
export function heldFindings(run: TaskRun) {
  return (run.findings ?? []).filter((query) => query.status === 'held' && query.heldByTaskRunId === run.id);
}

export function selectedCount(selection: Selection): number {
  return Object.values(selection).filter((entry) => entry.whole || entry.queryIds.length > 0).length;
}

type DecidedItem = { taskRunId: string; queryIds?: string[] };
type DecisionView = Pick<ReviewQueueState, 'runs' | 'reviews' | 'findingDecisions' | 'selection'>;

/** A run the server refused to decide, as the error the page shows on it (and above the queue when it reloads). */
function refusalError(result: ReviewOutcome): ApiError {
  const code = result.code ?? 'CONFLICT_STATE';
  return new ApiError(code === 'NOT_FOUND' ? 404 : 409, code, result.message ?? `Task run ${result.taskRunId} was not decided. Reload the review queue.`, { reason: result.reason });
}

/**
 * The page once the server answered one decision over `items`: refused runs show why; findings decided one by one
 * show their decision; a run still waiting carries the dataHash its next decision is checked against; a run whose
 * review is over shows how it went on, as the server answered.
 */
export function afterDecision(state: DecisionView, decision: ReviewDecision, items: readonly DecidedItem[], results: readonly ReviewOutcome[]): DecisionView {
  const reviews = { ...state.reviews };
  const findingDecisions = { ...state.findingDecisions };
  let runs = state.runs;
  for (const result of results) {
    const id = result.taskRunId;
    if (result.status === 'refused') {
      reviews[id] = { status: 'error', error: refusalError(result) };
      continue;
    }
    const queryIds = items.find((item) => item.taskRunId === id)?.queryIds;
    for (const queryId of queryIds ?? []) findingDecisions[queryId] = decision;
    if (result.status === 'decided') {
      // How the run's review ended is the server's to say: decided finding by finding, it is approved when any
      // finding went to the site, including one approved before this page was loaded.
      reviews[id] = { status: 'decided', decision: result.decision ?? decision };
      continue;
    }
    delete reviews[id];
    // A run still waiting shows what it holds now: its new dataHash goes with its next decision.
    const dataHash = result.dataHash;
    if (dataHash) runs = runs.map((run) => (run.id === id && run.reviewRequest ? { ...run, reviewRequest: { ...run.reviewRequest, dataHash } } : run));
  }
  const selection = Object.fromEntries(Object.entries(state.selection).filter(([id]) => !items.some((item) => item.taskRunId === id)));
  return { runs, reviews, findingDecisions, selection };
}

export const useReviewQueueStore = create<ReviewQueueState>()((set, get) => ({
  ...INITIAL,

  async load(projectId, page) {
    if (get().projectId !== projectId) set({ ...INITIAL, projectId });
    const wanted = page ?? get().page;
    set({ isLoading: true, error: null });
    try {
      const result = await api.trial.pageTaskRuns(projectId, { status: 'SUSPENDED' }, { page: wanted, pageSize: REVIEW_PAGE_SIZE });
      if (get().projectId !== projectId) return;
      // A page past the end (its last runs were decided): show the last page there is.
      const last = pageCount(result.total, REVIEW_PAGE_SIZE);
      if (result.taskRuns.length === 0 && wanted > last) {
        set({ page: last });
        await get().load(projectId, last);
        return;
      }
      const waiting = new Set(result.taskRuns.map((run) => run.id));
      const keep = <T>(byRun: Record<string, T>) => Object.fromEntries(Object.entries(byRun).filter(([id]) => waiting.has(id)));
      set((state) => ({ runs: result.taskRuns, total: result.total, page: result.page, hasLoaded: true, reviews: keep(state.reviews), selection: keep(state.selection), findingDecisions: {} }));
    } catch (error) {
      if (get().projectId === projectId) set({ error });
    } finally {
      set({ isLoading: false });
    }
  },

  async decide(projectId, decision, comment, selection) {
    const runs = get().runs;
    const items = Object.entries(selection)
      .filter(([, entry]) => entry.whole || entry.queryIds.length > 0)
      .map(([taskRunId, entry]) => {
        // The decision is about the run as this page shows it; the server refuses it if the run was checked again since.
        const dataHash = runs.find((run) => run.id === taskRunId)?.reviewRequest?.dataHash;
        return { taskRunId, ...(dataHash ? { dataHash } : {}), ...(entry.whole ? {} : { queryIds: entry.queryIds }) };
      });
    if (!items.length || items.some((item) => get().reviews[item.taskRunId]?.status === 'saving')) return false;
    set((state) => ({ conflict: null, reviews: { ...state.reviews, ...Object.fromEntries(items.map((item) => [item.taskRunId, { status: 'saving', decision } as ReviewState])) } }));
    let results: ReviewOutcome[];
    try {
      results = (await api.trial.decideReviews(projectId, { decision, ...(comment.trim() ? { comment: comment.trim() } : {}), items })).results;
    } catch (error) {
      set((state) => ({ reviews: { ...state.reviews, ...Object.fromEntries(items.map((item) => [item.taskRunId, { status: 'error', error } as ReviewState])) } }));
      return false;
    }
    set((state) => afterDecision(state, decision, items, results));
    const refused = results.find((result) => result.status === 'refused');
    if (refused && (refused.code === 'CONFLICT_STATE' || refused.code === 'NOT_FOUND')) {
      // Someone decided first, or the record changed and the run is checking it again: reload so the queue shows
      // only what still waits, as it is now.
      set({ conflict: refusalError(refused) });
      await get().load(projectId);
    }
    return results.some((result) => result.status !== 'refused');
  },

  toggleRun(taskRunId) {
    set((state) => {
      const entry = state.selection[taskRunId];
      const selection = { ...state.selection };
      if (entry?.whole) delete selection[taskRunId];
      else selection[taskRunId] = { whole: true, queryIds: [] };
      return { selection };
    });
  },

  toggleFinding(taskRunId, queryId) {
    set((state) => {
      const entry = state.selection[taskRunId] ?? { whole: false, queryIds: [] };
      const queryIds = entry.queryIds.includes(queryId) ? entry.queryIds.filter((id) => id !== queryId) : [...entry.queryIds, queryId];
      return { selection: { ...state.selection, [taskRunId]: { whole: false, queryIds } } };
    });
  },

  selectPage(selected) {
    set((state) => ({
      selection: selected ? Object.fromEntries(state.runs.filter((run) => state.reviews[run.id]?.status !== 'decided').map((run) => [run.id, { whole: true, queryIds: [] }])) : {},
    }));
  },

  dismissConflict() {
    set({ conflict: null });
  },

  reset() {
    set({ ...INITIAL });
  },
}));
