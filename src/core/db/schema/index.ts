export * from './auth.js';
export * from './trace.js';
export * from './rag.js';
export * from './trial.js';
export * from './audit.js';
export * from './conversations.js';
export * from './runs.js';
export * from './memory.js';
