export type { AgentDefinition, DecisionSpec, EngineSpec, PromptBuilder, StageDefinition, StopSettings, ToolUse } from './agent-definition.js';
export { createAgentRegistry, type AgentRegistry } from './registry.js';
export { definitionProblems, validateDefinition } from './validate-definition.js';
