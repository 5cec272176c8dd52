import { create } from 'zustand';
import { api, type OpenApiDocument } from '../api';

interface ApiDocsState {
  document: OpenApiDocument | null;
  isLoading: boolean;
  error: unknown;
  load(): Promise<void>;
  reset(): void;
}

export const useApiDocsStore = create<ApiDocsState>()((set) => ({
  document: null,
  isLoading: false,
  error: null,
  async load() {
    set({ isLoading: true, error: null });
    try {
      set({ document: await api.openApi() });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },
  reset() {
    set({ document: null, isLoading: false, error: null });
  },
}));
