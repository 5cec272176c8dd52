import type { ConversationDetail, ConversationListQuery, ConversationSummary } from '../../../src/contract/index.js';
import type { HttpClient } from './http-client';
import type { AgentResult, AgentRunRequest } from './types';

export type { ConversationDetail, ConversationSummary };
export type { ConversationTurn } from '../../../src/contract/index.js';

/** POST /api/agent/run continues the conversation it is given, and names the conversation in its result. */
export type ConversationRunRequest = AgentRunRequest & { conversationId?: string };

/** The conversation a run was added to (the first run of a conversation starts it). */
export function conversationIdOf(result: AgentResult): string | undefined {
  const id = (result as AgentResult & { conversationId?: unknown }).conversationId;
  return typeof id === 'string' && id ? id : undefined;
}

/** Your conversations (GET /api/conversations) and one with its turns (GET /api/conversations/:id). */
export function createConversationsApi(http: HttpClient) {
  return {
    list: async (query: Omit<ConversationListQuery, 'limit'> & { limit?: number } = {}) => {
      const params = new URLSearchParams(Object.entries(query).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]])));
      const search = params.toString();
      return (await http.get<{ conversations: ConversationSummary[] }>(`/api/conversations${search ? `?${search}` : ''}`)).conversations;
    },
    get: (conversationId: string) => http.get<ConversationDetail>(`/api/conversations/${encodeURIComponent(conversationId)}`),
  };
}
