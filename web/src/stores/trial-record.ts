import { create } from 'zustand';
import { api, type TrialRecordView } from '../api';

export type RecordEntry = { status: 'loading' } | { status: 'loaded'; record: TrialRecordView } | { status: 'error'; error: unknown };

interface TrialRecordState {
  /** Keyed by project and record id (see recordKey). */
  entries: Record<string, RecordEntry>;
  load(projectId: string, recordId: string): Promise<void>;
  reset(): void;
}

export const recordKey = (projectId: string, recordId: string) => JSON.stringify([projectId, recordId]);

/** One subject's events, queries and audit trail. Reloaded on every visit: queries move and imports change data. */
export const useTrialRecordStore = create<TrialRecordState>()((set, get) => {
  function put(key: string, entry: RecordEntry): void {
    set((state) => ({ entries: { ...state.entries, [key]: entry } }));
  }
  return {
    entries: {},
    async load(projectId, recordId) {
      const key = recordKey(projectId, recordId);
      // A reload keeps the loaded record on screen instead of flashing a spinner.
      if (get().entries[key]?.status !== 'loaded') put(key, { status: 'loading' });
      try {
        put(key, { status: 'loaded', record: await api.trial.getRecord(projectId, recordId) });
      } catch (error) {
        put(key, { status: 'error', error });
      }
    },
    reset() {
      set({ entries: {} });
    },
  };
});
