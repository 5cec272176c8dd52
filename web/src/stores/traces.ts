import { create } from 'zustand';
import { api, type Trace } from '../api';

export type TraceEntry =
  | { status: 'loading' }
  | { status: 'loaded'; trace: Trace }
  | { status: 'error'; error: unknown };

interface TracesState {
  entries: Record<string, TraceEntry>;
  load(traceId: string): Promise<void>;
  reset(): void;
}

/** Traces are fetched only when a user opens one; a finished run's trace does not change, so it is cached. */
export const useTracesStore = create<TracesState>()((set, get) => {
  function put(traceId: string, entry: TraceEntry): void {
    set((state) => ({ entries: { ...state.entries, [traceId]: entry } }));
  }

  return {
    entries: {},
    async load(traceId) {
      const current = get().entries[traceId];
      if (current && current.status !== 'error') return;
      put(traceId, { status: 'loading' });
      try {
        put(traceId, { status: 'loaded', trace: await api.getTrace(traceId) });
      } catch (error) {
        put(traceId, { status: 'error', error });
      }
    },
    reset() {
      set({ entries: {} });
    },
  };
});
