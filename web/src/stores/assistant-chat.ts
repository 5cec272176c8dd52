import { create } from 'zustand';
import { api, type ChatAnswer } from '../api';
import { conversationsOf, useConversationsStore } from './conversations';
import { createConversationStream, streamConversationOf, type StreamConversation, type StreamTurn } from './conversation-stream';

/** One question to the trial assistant and its answer, as this session saw it. */
export type AssistantTurn = StreamTurn<ChatAnswer>;
export type AssistantConversation = StreamConversation<ChatAnswer>;

/** The assistant's turns per project, folded from the run events as every chat page's are. */
export const useAssistantTurnsStore = createConversationStream<ChatAnswer>();

export function assistantConversationOf(state: Pick<ReturnType<typeof useAssistantTurnsStore.getState>, 'byScope'>, projectId: string): AssistantConversation {
  return streamConversationOf(state, projectId);
}

interface AssistantChatActions {
  /** Asks the project's assistant; continues the open conversation of this project, if any. */
  send(projectId: string, input: string): Promise<void>;
  /** Stops the running answer: the connection closes and the server stops working on it. */
  stop(projectId: string): void;
  /** This session's turns go; the next question starts a new conversation. */
  clear(projectId: string): void;
  reset(): void;
}

/** What the assistant page does with a question: the turns are the conversation stream's, the conversation id the conversations store's. */
export const useAssistantChatStore = create<AssistantChatActions>()(() => {
  const turns = () => useAssistantTurnsStore.getState();
  return {
    async send(projectId, input) {
      const scope = { projectId };
      const conversationId = conversationsOf(useConversationsStore.getState(), scope).activeId;
      const message = input.trim();
      const outcome = await turns().send(projectId, { input }, (options) =>
        api.assistant.streamChat(projectId, conversationId ? { message, conversationId } : { message }, options),
      );
      if (outcome.status === 'answered') useConversationsStore.getState().remember(scope, outcome.result.conversationId);
      // The question was logged before it was stopped: the next one continues the same conversation.
      else if (outcome.status === 'stopped' && outcome.streaming.conversationId) useConversationsStore.getState().remember(scope, outcome.streaming.conversationId);
    },

    stop(projectId) {
      turns().stop(projectId);
    },

    clear(projectId) {
      turns().clear(projectId);
      useConversationsStore.getState().startNew({ projectId });
    },

    reset() {
      turns().reset();
    },
  };
});
