import { create } from 'zustand';
import { api, type Scenario } from '../api';

interface ScenariosState {
  scenarios: Scenario[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  load(): Promise<void>;
  reset(): void;
}

export const useScenariosStore = create<ScenariosState>()((set) => ({
  scenarios: [],
  hasLoaded: false,
  isLoading: false,
  error: null,
  async load() {
    // The previous list stays on screen while refreshing, so a refresh does not flash an empty page.
    set({ isLoading: true, error: null });
    try {
      set({ scenarios: await api.listScenarios(), hasLoaded: true });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },
  reset() {
    set({ scenarios: [], hasLoaded: false, isLoading: false, error: null });
  },
}));
