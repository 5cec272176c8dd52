import type { ConversationDetail, ConversationListQuery, ConversationSummary } from '../../../src/contract/index.js';
import type { HttpClient } from './http-client';
import type { AgentResult } from './types';

export type { ConversationDetail, ConversationSummary };
export type { ConversationTurn } from '../../../src/contract/index.js';

/** The conversation a run was added to (the first run of a conversation starts it). */
export function conversationIdOf(result: AgentResult): string | undefined {
  return result.conversationId ?? undefined;
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
