export { createConversationStore, type ConversationStoreDeps } from './conversation-store.js';
export { DEFAULT_HISTORY, DEFAULT_HISTORY_MAX_TOKENS, historyStrategyFromFile, type HistoryStrategy } from './history-strategy.js';
export type * from './types.js';
