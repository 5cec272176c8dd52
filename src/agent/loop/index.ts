export { runLoop, type Acceptance, type LastFailure, type LoopConfig, type LoopOutcome, type LoopTools, type Observations } from './run-loop.js';
export { attemptLimit, errorBreaker, reasoningBudget, roundLimit, tokenBudget, type LoopProgress, type StopCondition, type StopReason } from './stop-conditions.js';
export { readDecision, type Decision, type DecisionMode } from './decisions.js';
export type { AgentEvent, AgentEventSink } from './events.js';
