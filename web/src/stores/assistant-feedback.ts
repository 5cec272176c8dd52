import { create } from 'zustand';
import { api, type Feedback } from '../api';

/** The rating of one assistant answer as this session sent it. */
export type FeedbackEntry =
  | { status: 'saving'; rating: 'up' | 'down' }
  | { status: 'saved'; feedback: Feedback }
  | { status: 'error'; rating: 'up' | 'down'; error: unknown };

/** Feedback rates one assistant turn: `conversationId#turnSeq`. */
export function feedbackKey(conversationId: string, turnSeq: number): string {
  return `${conversationId}#${turnSeq}`;
}

interface AssistantFeedbackState {
  entries: Record<string, FeedbackEntry>;
  /** Rates an answer; rating it again replaces the earlier rating on the server. */
  send(projectId: string, input: { conversationId: string; turnSeq: number; rating: 'up' | 'down'; comment: string }): Promise<void>;
  reset(): void;
}

export const useAssistantFeedbackStore = create<AssistantFeedbackState>()((set) => {
  function put(key: string, entry: FeedbackEntry): void {
    set((state) => ({ entries: { ...state.entries, [key]: entry } }));
  }

  return {
    entries: {},
    async send(projectId, { conversationId, turnSeq, rating, comment }) {
      const key = feedbackKey(conversationId, turnSeq);
      put(key, { status: 'saving', rating });
      try {
        const text = comment.trim();
        const feedback = await api.assistant.sendFeedback(projectId, { conversationId, turnSeq, rating, ...(text ? { comment: text } : {}) });
        put(key, { status: 'saved', feedback });
      } catch (error) {
        put(key, { status: 'error', rating, error });
      }
    },
    reset() {
      set({ entries: {} });
    },
  };
});
