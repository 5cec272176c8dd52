import { create } from 'zustand';
import { api, type QcRunProgress } from '../../../api';
import { rerunAfterActivation, type ImpactOf, type RerunOffer } from './impact-rerun';

interface SkillImpactState {
  /** The last impact shown, with the YAML it was computed for (the editor may have changed since). */
  last: ImpactOf | null;
  error: unknown;
  isLoading: boolean;
  /** Set when a version the last impact was computed for has just been activated. */
  offer: RerunOffer | null;
  isStarting: boolean;
  started: QcRunProgress | null;
  startError: unknown;
  /** Asks what activating `yaml` would change on this trial (POST /skills/impact); writes nothing. */
  compute(projectId: string, yaml: string): Promise<void>;
  /** The editor activated `yaml` for `skillId`: offer to re-run what the last impact of that text listed. */
  activated(skillId: string, yaml: string): void;
  /** Starts the QC run of the offer (POST /qc-runs with its record ids). */
  rerun(projectId: string): Promise<void>;
  reset(): void;
}

const INITIAL = { last: null, error: null, isLoading: false, offer: null, isStarting: false, started: null, startError: null } as const;

/** Amendment impact in the skill editor, and the re-run of the records it names once the version is active. */
export const useSkillImpactStore = create<SkillImpactState>()((set, get) => ({
  ...INITIAL,

  async compute(projectId, yaml) {
    if (get().isLoading) return;
    set({ isLoading: true, error: null });
    try {
      const impact = await api.skills.impact(projectId, yaml);
      set({ last: { impact, yaml } });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },

  activated(skillId, yaml) {
    set({ offer: rerunAfterActivation(get().last, { skillId, yaml }), started: null, startError: null });
  },

  async rerun(projectId) {
    const { offer, isStarting } = get();
    if (!offer || isStarting) return;
    set({ isStarting: true, startError: null });
    try {
      const started = await api.trial.startQcRun(projectId, offer.skillId, offer.recordIds ?? undefined);
      // One run per activation: the offer is spent once its run has started.
      set({ started, offer: null });
    } catch (startError) {
      set({ startError });
    } finally {
      set({ isStarting: false });
    }
  },

  reset() {
    set({ ...INITIAL });
  },
}));
