export { createConversationStore } from './conversation-store.js';
export type * from './types.js';
