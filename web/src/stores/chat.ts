import { create } from 'zustand';
import { streamAgent, type AgentResult } from '../api';
import { applyStreamEvent, EMPTY_STREAM, type StreamingAnswer } from './chat-stream';
import { conversationIdOf } from '../api/conversations-api';
import { conversationsOf, useConversationsStore } from './conversations';

export interface Turn {
  id: number;
  input: string;
  /** Documents the run was limited to; undefined means all of the scenario's documents. */
  documentIds?: string[];
  result?: AgentResult;
  /** Set when the HTTP call itself failed (no AgentResult came back). */
  requestError?: unknown;
  /** The answer as it arrives, until `result` replaces it; stays (marked stopped) when the user pressed Stop. */
  streaming?: StreamingAnswer;
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
  /** Stops the running turn: the request is aborted, the server stops the run and marks its trace cancelled. */
  stop(scenarioId: string): void;
  setExcluded(scenarioId: string, excludedDocumentIds: string[]): void;
  clear(scenarioId: string): void;
  reset(): void;
}

let nextTurnId = 1;

/** Every question after the first of a conversation carries its id, so the agent sees what was said before. */
function continuing(scenarioId: string): { conversationId?: string } {
  const conversationId = conversationsOf(useConversationsStore.getState(), { scenarioId }).activeId;
  return conversationId ? { conversationId } : {};
}

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

  /** The running turn's request per scenario, for the Stop button. */
  const running = new Map<string, AbortController>();

  function updateStreaming(scenarioId: string, turnId: number, change: (answer: StreamingAnswer) => StreamingAnswer): void {
    update(scenarioId, (c) => ({ ...c, turns: c.turns.map((turn) => (turn.id === turnId ? { ...turn, streaming: change(turn.streaming ?? EMPTY_STREAM) } : turn)) }));
  }

  return {
    conversations: {},

    async send(scenarioId, input, documentIds) {
      const text = input.trim();
      // One run at a time per scenario: the agent is stateless, but overlapping answers would be hard to read.
      if (!text || conversationOf(get(), scenarioId).isRunning) return;
      const turn: Turn = { id: nextTurnId++, input: text, documentIds };
      update(scenarioId, (c) => ({ ...c, isRunning: true, turns: [...c.turns, turn] }));
      const controller = new AbortController();
      running.set(scenarioId, controller);
      try {
        const result = await streamAgent(
          { scenarioId, input: text, ...(documentIds ? { options: { documentIds } } : {}), ...continuing(scenarioId) },
          { signal: controller.signal, onEvent: (event) => updateStreaming(scenarioId, turn.id, (answer) => applyStreamEvent(answer, event)) },
        );
        updateTurn(scenarioId, turn.id, { result });
        const conversationId = conversationIdOf(result);
        if (conversationId) useConversationsStore.getState().remember({ scenarioId }, conversationId);
      } catch (requestError) {
        if (controller.signal.aborted) updateStreaming(scenarioId, turn.id, (answer) => ({ ...answer, isStopped: true }));
        else updateTurn(scenarioId, turn.id, { requestError });
      } finally {
        running.delete(scenarioId);
        update(scenarioId, (c) => ({ ...c, isRunning: false }));
      }
    },

    stop(scenarioId) {
      running.get(scenarioId)?.abort();
    },

    setExcluded(scenarioId, excludedDocumentIds) {
      update(scenarioId, (c) => ({ ...c, excludedDocumentIds }));
    },

    clear(scenarioId) {
      update(scenarioId, (c) => ({ ...c, turns: [] }));
      useConversationsStore.getState().startNew({ scenarioId });
    },

    reset() {
      set({ conversations: {} });
    },
  };
});
