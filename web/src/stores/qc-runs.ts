import { create } from 'zustand';
import { api, type QcRunProgress } from '../api';

/** About once a second, as the issue asks: fast enough to watch a batch move, cheap for the server. */
export const QC_POLL_INTERVAL_MS = 1000;

export function isQcRunActive(run: QcRunProgress): boolean {
  return run.status === 'running' || run.status === 'queued';
}

interface QcRunsState {
  /** The project the runs below belong to; a page for another project reloads. */
  projectId: string | null;
  runs: QcRunProgress[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** The skill whose "Run QC" request is in flight. */
  startingSkillId: string | null;
  startError: unknown;
  load(projectId: string): Promise<void>;
  start(projectId: string, skillId: string): Promise<void>;
  /** Polls active runs while the returned function has not been called; the runs page calls it on mount. */
  watch(): () => void;
  reset(): void;
}

export const useQcRunsStore = create<QcRunsState>()((set, get) => {
  let watchers = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // One poll loop at most: a page that unmounts and mounts again while a poll is in flight must not start a second.
  let isPolling = false;

  function schedulePoll(): void {
    if (timer !== undefined || isPolling || watchers === 0 || !get().runs.some(isQcRunActive)) return;
    timer = setTimeout(() => {
      timer = undefined;
      void poll();
    }, QC_POLL_INTERVAL_MS);
  }

  async function poll(): Promise<void> {
    isPolling = true;
    try {
      const projectId = get().projectId;
      const active = get().runs.filter(isQcRunActive);
      // A failed poll keeps the last progress on screen; the next tick tries again.
      const updates = await Promise.all(active.map((run) => api.trial.getQcRun(run.id).catch(() => run)));
      if (get().projectId !== projectId) return;
      const byId = new Map(updates.map((run) => [run.id, run]));
      set((state) => ({ runs: state.runs.map((run) => byId.get(run.id) ?? run) }));
    } finally {
      isPolling = false;
    }
    schedulePoll();
  }

  return {
    projectId: null,
    runs: [],
    hasLoaded: false,
    isLoading: false,
    error: null,
    startingSkillId: null,
    startError: null,

    async load(projectId) {
      if (get().projectId !== projectId) set({ projectId, runs: [], hasLoaded: false, startError: null });
      set({ isLoading: true, error: null });
      try {
        const runs = await api.trial.listQcRuns(projectId);
        if (get().projectId === projectId) set({ runs, hasLoaded: true });
      } catch (error) {
        if (get().projectId === projectId) set({ error });
      } finally {
        set({ isLoading: false });
      }
      schedulePoll();
    },

    async start(projectId, skillId) {
      if (get().startingSkillId) return;
      set({ startingSkillId: skillId, startError: null });
      try {
        const run = await api.trial.startQcRun(projectId, skillId);
        if (get().projectId === projectId) set((state) => ({ runs: [run, ...state.runs.filter((r) => r.id !== run.id)] }));
      } catch (startError) {
        set({ startError });
      } finally {
        set({ startingSkillId: null });
      }
      schedulePoll();
    },

    watch() {
      watchers += 1;
      schedulePoll();
      return () => {
        watchers -= 1;
        if (watchers === 0 && timer !== undefined) {
          clearTimeout(timer);
          timer = undefined;
        }
      };
    },

    reset() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      set({ projectId: null, runs: [], hasLoaded: false, isLoading: false, error: null, startingSkillId: null, startError: null });
    },
  };
});
