import { create } from 'zustand';
import { api, ApiError, type DataQuery, type ReviewDecision, type TaskRun } from '../api';

export type RunQueries = { status: 'loading' } | { status: 'loaded'; queries: DataQuery[] } | { status: 'error'; error: unknown };

export type ReviewState =
  | { status: 'saving'; decision: ReviewDecision }
  | { status: 'decided'; decision: ReviewDecision; run: TaskRun }
  | { status: 'error'; error: unknown };

interface ReviewQueueState {
  projectId: string | null;
  /** Runs suspended at a human_review node when last loaded; decided ones stay until the next load. */
  runs: TaskRun[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  queriesByRun: Record<string, RunQueries>;
  reviews: Record<string, ReviewState>;
  /** Another reviewer decided first (409 CONFLICT_STATE); the server's message is shown above the refreshed queue. */
  conflict: ApiError | null;
  load(projectId: string): Promise<void>;
  loadQueries(projectId: string, taskRunId: string): Promise<void>;
  decide(projectId: string, taskRunId: string, decision: ReviewDecision, comment: string): Promise<void>;
  dismissConflict(): void;
  reset(): void;
}

const INITIAL = {
  projectId: null,
  runs: [],
  hasLoaded: false,
  isLoading: false,
  error: null,
  queriesByRun: {},
  reviews: {},
  conflict: null,
} satisfies Partial<ReviewQueueState>;

/** Runs still waiting for a decision, for the queue count. */
export function waitingCount(state: Pick<ReviewQueueState, 'runs' | 'reviews'>): number {
  return state.runs.filter((run) => state.reviews[run.id]?.status !== 'decided').length;
}

export const useReviewQueueStore = create<ReviewQueueState>()((set, get) => {
  function setReview(taskRunId: string, review: ReviewState): void {
    set((state) => ({ reviews: { ...state.reviews, [taskRunId]: review } }));
  }

  return {
    ...INITIAL,

    async load(projectId) {
      if (get().projectId !== projectId) set({ ...INITIAL, projectId });
      set({ isLoading: true, error: null });
      try {
        const runs = await api.trial.listTaskRuns(projectId, { status: 'SUSPENDED' });
        if (get().projectId !== projectId) return;
        // Oldest first: a queue is worked in the order runs stopped, so no record waits behind newer ones.
        runs.sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
        // Keep what is known about runs still waiting (their queries, a decision in flight); drop the rest.
        const waiting = new Set(runs.map((run) => run.id));
        const keep = <T>(byRun: Record<string, T>) => Object.fromEntries(Object.entries(byRun).filter(([id]) => waiting.has(id)));
        set((state) => ({ runs, hasLoaded: true, reviews: keep(state.reviews), queriesByRun: keep(state.queriesByRun) }));
      } catch (error) {
        if (get().projectId === projectId) set({ error });
      } finally {
        set({ isLoading: false });
      }
    },

    async loadQueries(projectId, taskRunId) {
      if (get().queriesByRun[taskRunId]) return;
      set((state) => ({ queriesByRun: { ...state.queriesByRun, [taskRunId]: { status: 'loading' } } }));
      let entry: RunQueries;
      try {
        entry = { status: 'loaded', queries: await api.trial.listQueries(projectId, { taskRunId }) };
      } catch (error) {
        entry = { status: 'error', error };
      }
      set((state) => ({ queriesByRun: { ...state.queriesByRun, [taskRunId]: entry } }));
    },

    async decide(projectId, taskRunId, decision, comment) {
      if (get().reviews[taskRunId]?.status === 'saving') return;
      setReview(taskRunId, { status: 'saving', decision });
      set({ conflict: null });
      try {
        // The decision is about the run as this page shows it; the server refuses it if the run was checked again since.
        const shown = get().runs.find((run) => run.id === taskRunId)?.reviewRequest?.dataHash;
        const run = await api.trial.reviewTaskRun(taskRunId, decision, comment.trim(), shown ?? undefined);
        setReview(taskRunId, { status: 'decided', decision, run });
      } catch (error) {
        if (error instanceof ApiError && error.code === 'CONFLICT_STATE') {
          // Someone decided first, or the record changed and the run is checking it again: reload so the queue
          // shows only what still waits, as it is now.
          set({ conflict: error });
          await get().load(projectId);
          return;
        }
        setReview(taskRunId, { status: 'error', error });
      }
    },

    dismissConflict() {
      set({ conflict: null });
    },

    reset() {
      set({ ...INITIAL });
    },
  };
});
