import { create } from 'zustand';
import { api, ApiError, type HotMemory, type HotMemoryVersion, type MemoryWriteResult } from '../api';

/** How the last save or restore went, shown above the editor. */
export type MemoryWriteState =
  | { status: 'idle' }
  | { status: 'saving' }
  | { status: 'saved'; result: MemoryWriteResult; restoredVersion?: number }
  /** Someone saved a newer version since the editor opened (409): reload before saving again. */
  | { status: 'conflict'; error: ApiError }
  | { status: 'error'; error: unknown };

interface HotMemoryState {
  projectId: string | null;
  memory: HotMemory | null;
  isLoading: boolean;
  error: unknown;
  versions: HotMemoryVersion[];
  versionsLoaded: boolean;
  versionsError: unknown;
  write: MemoryWriteState;
  /** The memory and its version history. */
  load(projectId: string): Promise<void>;
  /** The editor's whole document; `baseVersion` is the version the editor opened. True when it was saved. */
  save(projectId: string, content: string, baseVersion: number): Promise<boolean>;
  /** Restores an earlier version as a new one. True when it was restored. */
  rollback(projectId: string, version: number): Promise<boolean>;
  clearWrite(): void;
  reset(): void;
}

const INITIAL = {
  projectId: null,
  memory: null,
  isLoading: false,
  error: null,
  versions: [],
  versionsLoaded: false,
  versionsError: null,
  write: { status: 'idle' } as MemoryWriteState,
};

export const useHotMemoryStore = create<HotMemoryState>()((set, get) => {
  /** Answers for a project the user already left are dropped. */
  const isCurrent = (projectId: string) => get().projectId === projectId;

  async function loadVersions(projectId: string): Promise<void> {
    try {
      const versions = await api.assistant.listMemoryVersions(projectId);
      if (isCurrent(projectId)) set({ versions, versionsLoaded: true, versionsError: null });
    } catch (versionsError) {
      if (isCurrent(projectId)) set({ versionsLoaded: true, versionsError });
    }
  }

  async function write(projectId: string, call: () => Promise<MemoryWriteResult>, restoredVersion?: number): Promise<boolean> {
    if (get().write.status === 'saving') return false;
    set({ write: { status: 'saving' } });
    try {
      const result = await call();
      if (!isCurrent(projectId)) return true;
      set({ memory: result.memory, write: { status: 'saved', result, ...(restoredVersion ? { restoredVersion } : {}) } });
      void loadVersions(projectId);
      return true;
    } catch (error) {
      if (!isCurrent(projectId)) return false;
      set({ write: error instanceof ApiError && error.status === 409 ? { status: 'conflict', error } : { status: 'error', error } });
      return false;
    }
  }

  return {
    ...INITIAL,

    async load(projectId) {
      if (!isCurrent(projectId)) set({ ...INITIAL, projectId });
      set({ isLoading: true, error: null });
      const versions = loadVersions(projectId);
      try {
        const memory = await api.assistant.getMemory(projectId);
        if (isCurrent(projectId)) set({ memory });
      } catch (error) {
        if (isCurrent(projectId)) set({ error });
      } finally {
        if (isCurrent(projectId)) set({ isLoading: false });
      }
      await versions;
    },

    save(projectId, content, baseVersion) {
      return write(projectId, () => api.assistant.replaceMemory(projectId, { content, baseVersion }));
    },

    rollback(projectId, version) {
      return write(projectId, () => api.assistant.rollbackMemory(projectId, version), version);
    },

    clearWrite() {
      set({ write: { status: 'idle' } });
    },

    reset() {
      set({ ...INITIAL });
    },
  };
});
