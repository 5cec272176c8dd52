import { create } from 'zustand';
import { api, type AgentSummary } from '../api';

interface AgentsState {
  /** The agents of the server's one registry the signed-in user may see (GET /api/agents decides which). */
  agents: AgentSummary[];
  hasLoaded: boolean;
  isLoading: boolean;
  error: unknown;
  load(): Promise<void>;
  reset(): void;
}

export const useAgentsStore = create<AgentsState>()((set) => ({
  agents: [],
  hasLoaded: false,
  isLoading: false,
  error: null,
  async load() {
    // The previous list stays on screen while refreshing, so a refresh does not flash an empty page.
    set({ isLoading: true, error: null });
    try {
      set({ agents: await api.listAgents(), hasLoaded: true });
    } catch (error) {
      set({ error });
    } finally {
      set({ isLoading: false });
    }
  },
  reset() {
    set({ agents: [], hasLoaded: false, isLoading: false, error: null });
  },
}));
