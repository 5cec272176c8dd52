import { create } from 'zustand';
import { streamAgent, type AgentResult } from '../api';
import { conversationIdOf } from '../api/conversations-api';
import { conversationsOf, useConversationsStore } from './conversations';
import { createConversationStream, streamConversationOf, type StreamConversation, type StreamTurn } from './conversation-stream';

/** One question to a scenario's agent: the documents the run was limited to (undefined: all the scenario's). */
export type Turn = StreamTurn<AgentResult, { documentIds?: string[] }>;

/** The scenario pages' turns per scenario, folded from the run events as every chat page's are. */
export const useScenarioTurnsStore = createConversationStream<AgentResult, { documentIds?: string[] }>();

export function scenarioConversationOf(state: Pick<ReturnType<typeof useScenarioTurnsStore.getState>, 'byScope'>, scenarioId: string): StreamConversation<AgentResult, { documentIds?: string[] }> {
  return streamConversationOf(state, scenarioId);
}

interface ChatState {
  /**
   * Documents the user unticked, per scenario. Stored as exclusions, not selections, so documents ingested after
   * the page loaded are in scope by default, matching the "all documents" default of the API.
   */
  excludedDocumentIds: Record<string, string[]>;
  /** `inputs`: a Dify app's start-form values for this run (over the scenario's own). */
  send(scenarioId: string, input: string, documentIds?: string[], inputs?: Record<string, string>): Promise<void>;
  /** Stops the running turn: the request is aborted, the server stops the run and marks its trace cancelled. */
  stop(scenarioId: string): void;
  setExcluded(scenarioId: string, excludedDocumentIds: string[]): void;
  clear(scenarioId: string): void;
  reset(): void;
}

/** Every question after the first of a conversation carries its id, so the agent sees what was said before. */
function continuing(scenarioId: string): { conversationId?: string } {
  const conversationId = conversationsOf(useConversationsStore.getState(), { scenarioId }).activeId;
  return conversationId ? { conversationId } : {};
}

export function excludedOf(state: Pick<ChatState, 'excludedDocumentIds'>, scenarioId: string): string[] {
  return state.excludedDocumentIds[scenarioId] ?? NONE;
}
const NONE: string[] = [];

export const useChatStore = create<ChatState>()((set) => {
  const turns = () => useScenarioTurnsStore.getState();
  return {
    excludedDocumentIds: {},

    async send(scenarioId, input, documentIds, inputs) {
      const text = input.trim();
      const withInputs = inputs && Object.keys(inputs).length ? { inputs } : {};
      const outcome = await turns().send(scenarioId, { input, ...(documentIds ? { documentIds } : {}) }, (options) =>
        streamAgent({ scenarioId, input: text, ...(documentIds ? { options: { documentIds } } : {}), ...withInputs, ...continuing(scenarioId) }, options),
      );
      if (outcome.status !== 'answered') return;
      const conversationId = conversationIdOf(outcome.result);
      if (conversationId) useConversationsStore.getState().remember({ scenarioId }, conversationId);
    },

    stop(scenarioId) {
      turns().stop(scenarioId);
    },

    setExcluded(scenarioId, excludedDocumentIds) {
      set((state) => ({ excludedDocumentIds: { ...state.excludedDocumentIds, [scenarioId]: excludedDocumentIds } }));
    },

    clear(scenarioId) {
      turns().clear(scenarioId);
      useConversationsStore.getState().startNew({ scenarioId });
    },

    reset() {
      turns().reset();
      set({ excludedDocumentIds: {} });
    },
  };
});
