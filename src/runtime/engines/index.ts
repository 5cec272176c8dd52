export { createEngines, type AgentEngines } from './create-engines.js';
export type { AgentEngine, EngineRunOptions } from './engine.js';
