export { runLoop, type LoopConfig, type LoopOutcome, type Observations } from './run-loop.js';
export { attemptLimit, errorBreaker, roundLimit, tokenBudget, type StopCondition, type StopReason } from './stop-conditions.js';
export { readDecision } from './decisions.js';
export type { AgentEvent, AgentEventSink } from './events.js';
export { correctionMessage, MAX_ANSWER_CHARS } from './correction.js';
export { runDefinition, type RunDefinitionOptions } from './run-definition.js';
export { oneRoundAnswer, UNTRACED } from './one-shot.js';
