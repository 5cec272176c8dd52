import { create } from 'zustand';
import { api, type ChatAnswer } from '../api';
import { applyChatEvent, EMPTY_ASSISTANT_STREAM, type AssistantStream } from './assistant-stream';
import { conversationsOf, useConversationsStore } from './conversations';

/** One question to the trial assistant and its answer, as this session saw it. */
export interface AssistantTurn {
  id: number;
  input: string;
  /** The answer as it arrives; stays (marked stopped) when the user pressed Stop. */
  stream: AssistantStream;
  /** The final answer; replaces the stream once it arrives. */
  result?: ChatAnswer;
  /** The request itself failed (no answer came back). */
  requestError?: unknown;
}

export interface AssistantConversation {
  turns: AssistantTurn[];
  isRunning: boolean;
}

const EMPTY: AssistantConversation = { turns: [], isRunning: false };

interface AssistantChatState {
  byProject: Record<string, AssistantConversation>;
  /** Asks the project's assistant; continues the open conversation of this project, if any. */
  send(projectId: string, input: string): Promise<void>;
  /** Stops the running answer: the connection closes and the server stops working on it. */
  stop(projectId: string): void;
  /** This session's turns go; the next question starts a new conversation. */
  clear(projectId: string): void;
  reset(): void;
}

export function assistantConversationOf(state: Pick<AssistantChatState, 'byProject'>, projectId: string): AssistantConversation {
  return state.byProject[projectId] ?? EMPTY;
}

let nextTurnId = 1;

export const useAssistantChatStore = create<AssistantChatState>()((set, get) => {
  function update(projectId: string, change: (conversation: AssistantConversation) => AssistantConversation): void {
    set((state) => ({ byProject: { ...state.byProject, [projectId]: change(assistantConversationOf(state, projectId)) } }));
  }

  function updateTurn(projectId: string, turnId: number, change: (turn: AssistantTurn) => AssistantTurn): void {
    update(projectId, (c) => ({ ...c, turns: c.turns.map((turn) => (turn.id === turnId ? change(turn) : turn)) }));
  }

  /** The running answer's request per project, for the Stop button. */
  const running = new Map<string, AbortController>();

  return {
    byProject: {},

    async send(projectId, input) {
      const message = input.trim();
      if (!message || assistantConversationOf(get(), projectId).isRunning) return;
      const scope = { projectId };
      const conversationId = conversationsOf(useConversationsStore.getState(), scope).activeId;
      const turn: AssistantTurn = { id: nextTurnId++, input: message, stream: EMPTY_ASSISTANT_STREAM };
      update(projectId, (c) => ({ ...c, isRunning: true, turns: [...c.turns, turn] }));
      const controller = new AbortController();
      running.set(projectId, controller);
      try {
        const result = await api.assistant.streamChat(projectId, conversationId ? { message, conversationId } : { message }, {
          signal: controller.signal,
          onEvent: (event) => updateTurn(projectId, turn.id, (t) => ({ ...t, stream: applyChatEvent(t.stream, event) })),
        });
        updateTurn(projectId, turn.id, (t) => ({ ...t, result }));
        useConversationsStore.getState().remember(scope, result.conversationId);
      } catch (requestError) {
        if (controller.signal.aborted) {
          updateTurn(projectId, turn.id, (t) => ({ ...t, stream: { ...t.stream, isStopped: true } }));
          // The question was logged before it was stopped: the next one continues the same conversation.
          const started = assistantConversationOf(get(), projectId).turns.find((t) => t.id === turn.id)?.stream.conversationId;
          if (started) useConversationsStore.getState().remember(scope, started);
        } else updateTurn(projectId, turn.id, (t) => ({ ...t, requestError }));
      } finally {
        running.delete(projectId);
        update(projectId, (c) => ({ ...c, isRunning: false }));
      }
    },

    stop(projectId) {
      running.get(projectId)?.abort();
    },

    clear(projectId) {
      update(projectId, (c) => ({ ...c, turns: [] }));
      useConversationsStore.getState().startNew({ projectId });
    },

    reset() {
      for (const controller of running.values()) controller.abort();
      set({ byProject: {} });
    },
  };
});
