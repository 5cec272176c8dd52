import { create } from 'zustand';
import { api, type InvalidScenario, type Scenario } from '../api';
import { loadLists, NOT_LOADED, type LoadState } from './load-lists';

interface ScenariosState extends LoadState {
  scenarios: Scenario[];
  /** Scenario files the server could not load, with their problems (it serves the others). */
  invalid: InvalidScenario[];
  load(): Promise<void>;
  reset(): void;
}

export const useScenariosStore = create<ScenariosState>()((set) => ({
  scenarios: [],
  invalid: [],
  ...NOT_LOADED,
  load: () =>
    loadLists(set, async () => {
      const { scenarios, invalid } = await api.listScenarios();
      return { scenarios, invalid };
    }),
  reset() {
    set({ scenarios: [], invalid: [], ...NOT_LOADED });
  },
}));
