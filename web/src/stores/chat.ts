import { create } from 'zustand';
import { api, type AgentResult } from '../api';

export interface Turn {
  id: number;
  input: string;
  /** Documents the run was limited to; undefined means all of the scenario's documents. */
  documentIds?: string[];
  result?: AgentResult;
  /** Set when the HTTP call itself failed (no AgentResult came back). */
  requestError?: unknown;
}

export interface Conversation {
  turns: Turn[];
  isRunning: boolean;
  /**
   * Documents the user unticked. Stored as exclusions, not selections, so documents ingested after the page
   * loaded are in scope by default, matching the "all documents" default of the API.
   */
  excludedDocumentIds: string[];
}

const EMPTY: Conversation = { turns: [], isRunning: false, excludedDocumentIds: [] };

interface ChatState {
  conversations: Record<string, Conversation>;
  send(scenarioId: string, input: string, documentIds?: string[]): Promise<void>;
  setExcluded(scenarioId: string, excludedDocumentIds: string[]): void;
  clear(scenarioId: string): void;
  reset(): void;
}

let nextTurnId = 1;

export function conversationOf(state: ChatState, scenarioId: string): Conversation {
  return state.conversations[scenarioId] ?? EMPTY;
}

export const useChatStore = create<ChatState>()((set, get) => {
  function update(scenarioId: string, change: (conversation: Conversation) => Conversation): void {
    set((state) => ({
      conversations: { ...state.conversations, [scenarioId]: change(conversationOf(state, scenarioId)) },
    }));
  }

  function updateTurn(scenarioId: string, turnId: number, patch: Partial<Turn>): void {
    update(scenarioId, (c) => ({ ...c, turns: c.turns.map((turn) => (turn.id === turnId ? { ...turn, ...patch } : turn)) }));
  }

  return {
    conversations: {},

    async send(scenarioId, input, documentIds) {
      const text = input.trim();
      // One run at a time per scenario: the agent is stateless, but overlapping answers would be hard to read.
      if (!text || conversationOf(get(), scenarioId).isRunning) return;
      const turn: Turn = { id: nextTurnId++, input: text, documentIds };
      update(scenarioId, (c) => ({ ...c, isRunning: true, turns: [...c.turns, turn] }));
      try {
        const result = await api.runAgent({
          scenarioId,
          input: text,
          ...(documentIds ? { options: { documentIds } } : {}),
        });
        updateTurn(scenarioId, turn.id, { result });
      } catch (requestError) {
        updateTurn(scenarioId, turn.id, { requestError });
      } finally {
        update(scenarioId, (c) => ({ ...c, isRunning: false }));
      }
    },

    setExcluded(scenarioId, excludedDocumentIds) {
      update(scenarioId, (c) => ({ ...c, excludedDocumentIds }));
    },

    clear(scenarioId) {
      update(scenarioId, (c) => ({ ...c, turns: [] }));
    },

    reset() {
      set({ conversations: {} });
    },
  };
});
