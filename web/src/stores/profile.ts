import { create } from 'zustand';
import { api, type UpdateProfileRequest, type UserProfile } from '../api';

interface ProfileState {
  profile: UserProfile | null;
  isLoading: boolean;
  error: unknown;
  isSaving: boolean;
  saveError: unknown;
  /** Set after a successful save until the next change, for the "Saved" note. */
  savedAt: string | null;
  load(): Promise<void>;
  save(change: UpdateProfileRequest): Promise<void>;
  reset(): void;
}

const INITIAL = { profile: null, isLoading: false, error: null, isSaving: false, saveError: null, savedAt: null };

/** How the trial assistant answers the signed-in user: detail level, language and their role in the trial. */
export const useProfileStore = create<ProfileState>()((set, get) => ({
  ...INITIAL,

  async load() {
    set({ isLoading: true, error: null });
    try {
      set({ profile: await api.assistant.getProfile() });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },

  async save(change) {
    if (get().isSaving) return;
    set({ isSaving: true, saveError: null, savedAt: null });
    try {
      const profile = await api.assistant.updateProfile(change);
      set({ profile, savedAt: new Date().toISOString() });
    } catch (saveError) {
      set({ saveError });
    } finally {
      set({ isSaving: false });
    }
  },

  reset() {
    set({ ...INITIAL });
  },
}));
