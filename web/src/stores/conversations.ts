import { create } from 'zustand';
import { api } from '../api';
import type { ConversationSummary, ConversationTurn } from '../api/conversations-api';

/** Whose conversations a list holds: a scenario's chat, or a trial project's assistant. */
export type ConversationScope = { scenarioId: string } | { projectId: string };

/** The store key of a scope; scenario and project ids may coincide, so the kind is part of it. */
export function scopeKey(scope: ConversationScope): string {
  return 'scenarioId' in scope ? `scenario:${scope.scenarioId}` : `project:${scope.projectId}`;
}

/** The conversations of one chat: the earlier ones to reopen, and the one the next question continues. */
export interface ScopedConversations {
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

const EMPTY: ScopedConversations = { list: [], hasLoaded: false, isLoading: false, earlierTurns: [], isOpening: false };

interface ConversationsState {
  byScope: Record<string, ScopedConversations>;
  /** (Re)loads the scope's earlier conversations, most recently active first. */
  load(scope: ConversationScope): Promise<void>;
  /** Reopens an earlier conversation: its turns are shown and the next question continues it. */
  open(scope: ConversationScope, conversationId: string): Promise<void>;
  /** The next question starts a new conversation. */
  startNew(scope: ConversationScope): void;
  /** An answer named its conversation: later questions continue it, and the list shows it. */
  remember(scope: ConversationScope, conversationId: string): void;
  reset(): void;
}

export function conversationsOf(state: Pick<ConversationsState, 'byScope'>, scope: ConversationScope): ScopedConversations {
  return state.byScope[scopeKey(scope)] ?? EMPTY;
}

export const useConversationsStore = create<ConversationsState>()((set, get) => {
  function update(scope: ConversationScope, change: (current: ScopedConversations) => ScopedConversations): void {
    set((state) => ({ byScope: { ...state.byScope, [scopeKey(scope)]: change(conversationsOf(state, scope)) } }));
  }

  /** The latest open() wins: a slow answer for a conversation the user already left is dropped. */
  let openRequest = 0;

  return {
    byScope: {},

    async load(scope) {
      update(scope, (c) => ({ ...c, isLoading: true }));
      try {
        const list = await api.conversations.list({ ...scope });
        update(scope, (c) => ({ ...c, list, hasLoaded: true, isLoading: false, listError: undefined }));
      } catch (listError) {
        update(scope, (c) => ({ ...c, hasLoaded: true, isLoading: false, listError }));
      }
    },

    async open(scope, conversationId) {
      const request = ++openRequest;
      update(scope, (c) => ({ ...c, activeId: conversationId, earlierTurns: [], isOpening: true, openError: undefined }));
      try {
        const detail = await api.conversations.get(conversationId);
        if (request !== openRequest) return;
        update(scope, (c) => ({ ...c, earlierTurns: detail.turns, isOpening: false }));
      } catch (openError) {
        if (request !== openRequest) return;
        // The conversation cannot be continued if it cannot be read: the next question starts a new one.
        update(scope, (c) => ({ ...c, activeId: undefined, isOpening: false, openError }));
      }
    },

    startNew(scope) {
      openRequest++;
      update(scope, (c) => ({ ...c, activeId: undefined, earlierTurns: [], isOpening: false, openError: undefined }));
    },

    remember(scope, conversationId) {
      update(scope, (c) => ({ ...c, activeId: conversationId }));
      // A new conversation joins the list; a continued one moves to the top with its new message count.
      void get().load(scope);
    },

    reset() {
      openRequest++;
      set({ byScope: {} });
    },
  };
});
