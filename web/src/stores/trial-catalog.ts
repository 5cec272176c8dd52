import { create } from 'zustand';
import { api, type QcSkill, type TrialProject } from '../api';

interface TrialCatalogState {
  projects: TrialProject[];
  skills: QcSkill[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  load(): Promise<void>;
  reset(): void;
}

/** The trial projects the user belongs to and the installed QC skills: what every trial page picks from. */
export const useTrialCatalogStore = create<TrialCatalogState>()((set) => ({
  projects: [],
  skills: [],
  hasLoaded: false,
  isLoading: false,
  error: null,
  async load() {
    // The previous lists stay on screen while refreshing; record counts change after every import.
    set({ isLoading: true, error: null });
    try {
      const [projects, skills] = await Promise.all([api.trial.listProjects(), api.trial.listSkills()]);
      set({ projects, skills, hasLoaded: true });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },
  reset() {
    set({ projects: [], skills: [], hasLoaded: false, isLoading: false, error: null });
  },
}));
