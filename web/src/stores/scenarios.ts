import { create } from 'zustand';
import { api, type InvalidScenario, type Scenario } from '../api';

interface ScenariosState {
  scenarios: Scenario[];
  /** Scenario files the server could not load, with their problems (it serves the others). */
  invalid: InvalidScenario[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  load(): Promise<void>;
  reset(): void;
}

export const useScenariosStore = create<ScenariosState>()((set) => ({
  scenarios: [],
  invalid: [],
  hasLoaded: false,
  isLoading: false,
  error: null,
  async load() {
    // The previous list stays on screen while refreshing, so a refresh does not flash an empty page.
    set({ isLoading: true, error: null });
    try {
      const { scenarios, invalid } = await api.listScenarios();
      set({ scenarios, invalid, hasLoaded: true });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },
  reset() {
    set({ scenarios: [], invalid: [], hasLoaded: false, isLoading: false, error: null });
  },
}));
