export { runLoop, type Acceptance, type LastFailure, type LoopAnswer, type LoopConfig, type LoopOutcome, type LoopTools, type Observations, type Waiting } from './run-loop.js';
export { attemptLimit, correctionLimit, errorBreaker, truncationLimit, reasoningBudget, roundLimit, tokenBudget, type LoopProgress, type StopCondition, type StopReason } from './stop-conditions.js';
export { readDecision, type Decision, type DecisionMode } from './decisions.js';
export type { AgentEvent, AgentEventSink } from './events.js';
export { correctionMessage, MAX_ANSWER_CHARS, textCorrectionMessage, unshowableAnswer } from './correction.js';
export { runDefinition, type RunDefinitionOptions } from './run-definition.js';
export { assertComplete, oneRoundAnswer, UNTRACED } from './one-shot.js';
