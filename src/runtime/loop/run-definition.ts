import { ClinAgentError } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { ChatMessage } from '../../core/llm/types.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { AgentDefinition, StopSettings } from '../definitions/agent-definition.js';
import { answerOf } from '../definitions/answer-of.js';
import { correctionMessage, textCorrectionMessage } from './correction.js';
import type { AgentEventSink } from './events.js';
import { runLoop, type LoopOutcome, type LoopTools, type Observations } from './run-loop.js';
import { attemptLimit, correctionLimit, errorBreaker, reasoningBudget, roundLimit, tokenBudget, truncationLimit, type StopCondition } from './stop-conditions.js';

export interface RunDefinitionOptions<I> {
  llm: LlmGateway;
  trace: TraceScope;
  /** Where the definition's tools run; a run-bound registry (ToolRegistry.extend) for `requestTools`. Without it no tool is offered. */
  registry?: ToolRegistry;
  /** The agent's input: the user message of text instructions, the argument of a prompt builder. */
  input?: I;
  /** The whole message list instead (a continued conversation the caller assembled); the instructions are then not used. */
  messages?: ChatMessage[];
  /** How tool results and failures reach the model; a declared data block and the error by default. */
  observations?: Observations;
  onEvent?: AgentEventSink;
  onMessages?: (added: ChatMessage[]) => Promise<void>;
  signal?: AbortSignal;
  /** Limits of this caller on top of the definition's, checked after them. */
  extraStop?: StopCondition[];
  /** The model for this run when the caller picks one (a scenario, a setting); the definition's otherwise. */
  modelName?: string;
  /** Names the step spans; the definition's id by default. */
  name?: string;
}

/**
 * The one place a definition becomes a loop configuration: its messages (a system prompt plus the input, or its
 * builder's), the tool allow-list, the decision mode, the stop conditions, the model settings, and what a valid
 * answer is (its answer schema, with the correction round that follows an unusable one). Every agent that runs a
 * model goes through here, one-shot calls included (a definition with one round), so a definition means the same
 * thing wherever it runs.
 */
export async function runDefinition<I, T>(definition: AgentDefinition<I, T>, options: RunDefinitionOptions<I>): Promise<LoopOutcome<T>> {
  if (definition.engine.type !== 'builtin') {
    throw new ClinAgentError('AGENT_INVALID', `Agent "${definition.id}" runs on the ${definition.engine.type} engine, not on the built-in loop; run it through its engine.`, { agentId: definition.id });
  }
  const { model } = definition;
  const answer = answerOf(definition);
  const correction = definition.correction;
  return runLoop<T>({
    name: options.name ?? definition.id,
    llm: options.llm,
    trace: options.trace,
    messages: options.messages ?? messagesOf(definition, options.input),
    tools: options.registry ? loopTools(definition, options.registry) : undefined,
    decisions: definition.decision.mode === 'json' ? { actions: definition.decision.actions, toolAction: definition.decision.toolAction, waitOn: definition.decision.waitOn } : undefined,
    model: { name: options.modelName ?? model.name, temperature: model.temperature, maxTokens: model.maxTokens, jsonMode: model.jsonMode },
    stopWhen: [...stopConditions(definition.stop), ...(options.extraStop ?? [])],
    accept: (text) => answer.read(text, options.input),
    correction: correction
      ? (problems) => correction(problems, options.input)
      : (problems) => (answer.format === 'text' ? textCorrectionMessage(problems) : correctionMessage(problems, definition.answerShape)),
    observations: options.observations ?? DEFAULT_OBSERVATIONS,
    modelErrors: definition.stop.modelErrorsAreAttempts ? 'attempt' : 'throw',
    onEvent: options.onEvent,
    onMessages: options.onMessages,
    signal: options.signal,
  });
}

function messagesOf<I>(definition: AgentDefinition<I, unknown>, input: I | undefined): ChatMessage[] {
  if (typeof definition.instructions === 'function') return definition.instructions(input as I);
  if (typeof input !== 'string') {
    throw new ClinAgentError('VALIDATION_FAILED', `Agent "${definition.id}" has a text prompt, so its input must be the user's message as text; pass input as a string, or pass messages.`, { agentId: definition.id, field: 'input' });
  }
  return [
    { role: 'system', content: definition.instructions },
    { role: 'user', content: input },
  ];
}

/** The allow-list: the definition's tools, and those of its request tools this run's registry holds. */
function loopTools(definition: AgentDefinition<any, any>, registry: ToolRegistry): LoopTools {
  const allowed = [...definition.tools, ...(definition.requestTools ?? []).filter((name) => registry.get(name) && !definition.tools.includes(name))];
  const maxToolRounds = definition.stop.maxToolRounds;
  const countsFailed = definition.toolUse?.toolRoundsCounted === 'all';
  return {
    registry,
    allowed,
    // After maxToolRounds tool rounds tools are withheld, so a model that keeps calling has to answer.
    offerWhen: (progress) => allowed.length > 0 && (maxToolRounds === undefined || progress.toolRounds + (countsFailed ? progress.failedToolRounds : 0) < maxToolRounds),
    whenWithheld: definition.toolUse?.whenWithheld ?? 'refuse',
    scope: definition.toolUse?.scope,
  };
}

/**
 * In seed 000's order of precedence: a run that trips the error breaker ends as a technical failure even when it
 * has also spent its budget, and a spent budget outranks the round limit.
 */
function stopConditions(stop: StopSettings): StopCondition[] {
  const conditions: StopCondition[] = [];
  if (stop.errorBreaker !== undefined) conditions.push(errorBreaker(stop.errorBreaker));
  if (stop.reasoningBudget !== undefined) conditions.push(reasoningBudget(stop.reasoningBudget));
  if (stop.tokenBudget !== undefined) conditions.push(tokenBudget(stop.tokenBudget));
  if (stop.maxRounds !== undefined) conditions.push(roundLimit(stop.maxRounds));
  if (stop.attempts !== undefined) conditions.push(attemptLimit(stop.attempts));
  // Whatever a definition sets, a model that keeps answering unusably must not loop for ever: without a round
  // or attempt limit its unusable answers are bounded anyway, and answers cut off by the token limit always are.
  if (stop.attempts === undefined && stop.maxRounds === undefined) conditions.push(correctionLimit(DEFAULT_CORRECTIONS));
  conditions.push(truncationLimit(MAX_TRUNCATED_ANSWERS));
  return conditions;
}

/** Unusable answers a turn without its own limits may send back: seed 000's three retries. */
const DEFAULT_CORRECTIONS = 3;
/** Answers cut off in one turn: the second shows asking for a shorter one did not help. */
const MAX_TRUNCATED_ANSWERS = 2;

/** Tool output can echo records ("ignore your instructions"): it goes back as a declared data block. */
const DEFAULT_OBSERVATIONS: Observations = {
  result: (outcome) => dataBlock('tool_result', { result: outcome.result }),
  failure: (call, error) => `Tool call failed: ${error}\nFix the arguments of ${call.name} and call it again, or answer from what you already have.`,
};
