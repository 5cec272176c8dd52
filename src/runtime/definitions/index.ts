export type { AgentDefinition, AgentKind, DecisionSpec, EngineSpec, PromptBuilder, StageDefinition, StopSettings, ToolUse } from './agent-definition.js';
export { agentId, createAgentRegistry, type AgentId, type AgentRegistry } from './registry.js';
export { definitionProblems, validateDefinition } from './validate-definition.js';
export { decisionAnswerSchema, jsonAnswer, jsonSchemaOf, outputAnswer, textAnswer, type AnswerCheck, type AnswerRefinement, type AnswerSchema, type AnswerText, type JsonAnswerOptions } from './answer-schema.js';
export { answerOf } from './answer-of.js';
export { agentKind, agentsVisibleTo, describeAgent, type AgentDescription, type StartAccess } from './describe-agent.js';
