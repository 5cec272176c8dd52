import { create } from 'zustand';
import { api } from '../api';
import type { ConversationSummary, ConversationTurn } from '../api/conversations-api';

/** The conversations of one scenario's chat: the earlier ones to reopen, and the one the next question continues. */
export interface ScenarioConversations {
  list: ConversationSummary[];
  hasLoaded: boolean;
  isLoading: boolean;
  listError?: unknown;
  /** The conversation the next question continues; undefined until the first answer of a new one names it. */
  activeId?: string;
  /** Turns of a reopened conversation as the server keeps them; this session's turns follow in the chat store. */
  earlierTurns: ConversationTurn[];
  isOpening: boolean;
  openError?: unknown;
}

const EMPTY: ScenarioConversations = { list: [], hasLoaded: false, isLoading: false, earlierTurns: [], isOpening: false };

interface ConversationsState {
  byScenario: Record<string, ScenarioConversations>;
  /** (Re)loads the scenario's earlier conversations, most recently active first. */
  load(scenarioId: string): Promise<void>;
  /** Reopens an earlier conversation: its turns are shown and the next question continues it. */
  open(scenarioId: string, conversationId: string): Promise<void>;
  /** The next question starts a new conversation. */
  startNew(scenarioId: string): void;
  /** An answer named its conversation: later questions continue it, and the list shows it. */
  remember(scenarioId: string, conversationId: string): void;
  reset(): void;
}

export function conversationsOf(state: Pick<ConversationsState, 'byScenario'>, scenarioId: string): ScenarioConversations {
  return state.byScenario[scenarioId] ?? EMPTY;
}

export const useConversationsStore = create<ConversationsState>()((set, get) => {
  function update(scenarioId: string, change: (current: ScenarioConversations) => ScenarioConversations): void {
    set((state) => ({ byScenario: { ...state.byScenario, [scenarioId]: change(conversationsOf(state, scenarioId)) } }));
  }

  /** The latest open() wins: a slow answer for a conversation the user already left is dropped. */
  let openRequest = 0;

  return {
    byScenario: {},

    async load(scenarioId) {
      update(scenarioId, (c) => ({ ...c, isLoading: true }));
      try {
        const list = await api.conversations.list({ scenarioId });
        update(scenarioId, (c) => ({ ...c, list, hasLoaded: true, isLoading: false, listError: undefined }));
      } catch (listError) {
        update(scenarioId, (c) => ({ ...c, hasLoaded: true, isLoading: false, listError }));
      }
    },

    async open(scenarioId, conversationId) {
      const request = ++openRequest;
      update(scenarioId, (c) => ({ ...c, activeId: conversationId, earlierTurns: [], isOpening: true, openError: undefined }));
      try {
        const detail = await api.conversations.get(conversationId);
        if (request !== openRequest) return;
        update(scenarioId, (c) => ({ ...c, earlierTurns: detail.turns, isOpening: false }));
      } catch (openError) {
        if (request !== openRequest) return;
        // The conversation cannot be continued if it cannot be read: the next question starts a new one.
        update(scenarioId, (c) => ({ ...c, activeId: undefined, isOpening: false, openError }));
      }
    },

    startNew(scenarioId) {
      openRequest++;
      update(scenarioId, (c) => ({ ...c, activeId: undefined, earlierTurns: [], isOpening: false, openError: undefined }));
    },

    remember(scenarioId, conversationId) {
      update(scenarioId, (c) => ({ ...c, activeId: conversationId }));
      // A new conversation joins the list; a continued one moves to the top with its new message count.
      void get().load(scenarioId);
    },

    reset() {
      openRequest++;
      set({ byScenario: {} });
    },
  };
});
