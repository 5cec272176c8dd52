import { create } from 'zustand';
import { api, type Health } from '../api';

interface HealthState {
  health: Health | null;
  error: unknown;
  load(): Promise<void>;
}

/** Server status for the LLM warning banner and the footer; GET /api/health needs no token. */
export const useHealthStore = create<HealthState>()((set) => ({
  health: null,
  error: null,
  async load() {
    try {
      set({ health: await api.health(), error: null });
    } catch (error) {
      set({ error });
    }
  },
}));
