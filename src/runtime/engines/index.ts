export { createEngines, type AgentEngines, type CreateEnginesOptions } from './create-engines.js';
export type { AgentEngine, EngineRunOptions } from './engine.js';
export type { DifyEngineOptions } from './dify/dify-engine.js';
