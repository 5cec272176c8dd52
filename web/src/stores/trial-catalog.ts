import { create } from 'zustand';
import { api, type QcSkill, type TrialProject } from '../api';
import { loadLists, NOT_LOADED, type LoadState } from './load-lists';

interface TrialCatalogState extends LoadState {
  projects: TrialProject[];
  skills: QcSkill[];
  load(): Promise<void>;
  /** Admins: creates an empty project (its data comes from an import) and lists it. */
  createProject(id: string, name: string): Promise<void>;
  reset(): void;
}

/**
 * The skills a trial's pages list: those that run on it (named for it, or for every trial), and invalid skill files,
 * listed to admins, which are for no trial yet. Another trial's skill is that trial's business.
 */
export function skillsOfTrial(skills: readonly QcSkill[], projectId: string): QcSkill[] {
  return skills.filter((skill) => skill.status === 'invalid' || !skill.projects || skill.projects.includes(projectId));
}

/** The trial projects the user belongs to and the installed QC skills: what every trial page picks from. */
export const useTrialCatalogStore = create<TrialCatalogState>()((set, get) => ({
  projects: [],
  skills: [],
  ...NOT_LOADED,
  // Record counts change after every import: a refresh keeps the previous lists on screen meanwhile.
  load: () =>
    loadLists(set, async () => {
      const [projects, skills] = await Promise.all([api.trial.listProjects(), api.trial.listSkills()]);
      return { projects, skills };
    }),
  async createProject(id, name) {
    await api.trial.createProject(id, name);
    await get().load();
  },
  reset() {
    set({ projects: [], skills: [], ...NOT_LOADED });
  },
}));
