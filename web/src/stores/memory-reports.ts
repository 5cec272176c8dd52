import { create } from 'zustand';
import { api, type MemoryReport } from '../api';

interface MemoryReportsState {
  projectId: string | null;
  reports: MemoryReport[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  /** Weeks (their Monday, YYYY-MM-DD) being regenerated. */
  regenerating: Record<string, boolean>;
  regenerateError: { weekStart: string; error: unknown } | null;
  /** Why the last regeneration stored nothing (the model failed), in the server's plain words; the standing report stays listed. */
  regenerateNotice: { weekStart: string; notice: string } | null;
  load(projectId: string): Promise<void>;
  /** (Re)writes the report of the ISO week starting `weekStart` from that week's conversations. */
  regenerate(projectId: string, weekStart: string): Promise<void>;
  reset(): void;
}

const INITIAL = { projectId: null, reports: [], hasLoaded: false, isLoading: false, error: null, regenerating: {}, regenerateError: null, regenerateNotice: null };

/** Newest period first; a week before the year it was rolled into. */
function newestFirst(reports: MemoryReport[]): MemoryReport[] {
  return [...reports].sort((a, b) => b.periodStart.localeCompare(a.periodStart) || (a.kind === b.kind ? 0 : a.kind === 'week' ? -1 : 1));
}

export const useMemoryReportsStore = create<MemoryReportsState>()((set, get) => ({
  ...INITIAL,

  async load(projectId) {
    if (get().projectId !== projectId) set({ ...INITIAL, projectId });
    set({ isLoading: true, error: null });
    try {
      const reports = await api.assistant.listReports(projectId);
      if (get().projectId === projectId) set({ reports: newestFirst(reports), hasLoaded: true });
    } catch (error) {
      if (get().projectId === projectId) set({ error, hasLoaded: true });
    } finally {
      if (get().projectId === projectId) set({ isLoading: false });
    }
  },

  async regenerate(projectId, weekStart) {
    if (get().regenerating[weekStart]) return;
    set((state) => ({ regenerating: { ...state.regenerating, [weekStart]: true }, regenerateError: null, regenerateNotice: null }));
    try {
      const { stored, report, notice } = await api.assistant.regenerateReport(projectId, weekStart);
      if (get().projectId !== projectId) return;
      if (!stored) set({ regenerateNotice: { weekStart, notice: notice ?? '' } });
      // Not stored, the report that stands comes back too: listed as it is, in case the list had not loaded it.
      if (report) set((state) => ({ reports: newestFirst([report, ...state.reports.filter((r) => r.id !== report.id && !(r.kind === report.kind && r.label === report.label))]) }));
    } catch (error) {
      if (get().projectId === projectId) set({ regenerateError: { weekStart, error } });
    } finally {
      set((state) => ({ regenerating: { ...state.regenerating, [weekStart]: false } }));
    }
  },

  reset() {
    set({ ...INITIAL });
  },
}));
