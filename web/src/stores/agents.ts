import { create } from 'zustand';
import { api, type AgentSummary } from '../api';
import { loadLists, NOT_LOADED, type LoadState } from './load-lists';

interface AgentsState extends LoadState {
  /** The agents of the server's one registry the signed-in user may see (GET /api/agents decides which). */
  agents: AgentSummary[];
  load(): Promise<void>;
  reset(): void;
}

export const useAgentsStore = create<AgentsState>()((set) => ({
  agents: [],
  ...NOT_LOADED,
  load: () => loadLists(set, async () => ({ agents: await api.listAgents() })),
  reset() {
    set({ agents: [], ...NOT_LOADED });
  },
}));
