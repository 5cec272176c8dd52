import { ClinAgentError } from '../core/errors.js';
import type { LlmGateway } from '../core/llm/gateway.js';
import type { ChatMessage } from '../core/llm/types.js';
import type { ToolCallResult, ToolRegistry } from '../core/tools/registry.js';
import type { TraceScope } from '../core/trace/store.js';
import { runDefinition, type AgentEventSink, type StopCondition } from '../runtime/loop/index.js';
import type { AgentRegistry } from '../runtime/definitions/index.js';
import { DEFAULT_MAX_FAILED_TOOL_CALLS, INVESTIGATE_AGENT, INVESTIGATE_DEFINITION, type QuestionInput } from './definition.js';
import { endingMessage, endingOf, type InvestigateEnding } from './endings.js';
import { finalAnswerOnly } from './final-answer-only.js';
import { questionObservations, type QuestionContext } from './prompt.js';

export interface InvestigateInput {
  llm: LlmGateway;
  trace: TraceScope;
  /** The shared registry extended with this project's read tools (ToolRegistry.extend). Other registered tools are visible to refuse, never run. */
  registry: ToolRegistry;
  question: string;
  language: 'zh' | 'en';
  context: QuestionContext;
  limits: { maxIterations: number; tokenBudget: number; maxFailedToolCalls?: number /* default 2 */ };
  onEvent?: AgentEventSink;
  onMessages?: (added: ChatMessage[]) => Promise<void>;
  signal?: AbortSignal;
  model?: string;
  /** The registry the definition is resolved from (the server's; a library caller registers builtinAgentDefinitions). */
  agents: Pick<AgentRegistry, 'get'>;
}

export interface InvestigateResult {
  ok: boolean;
  /** What the user sees: the model's final answer, or the seed's message for the limit that ended the run. */
  answer: string;
  ending: InvestigateEnding;
  rounds: number;
  toolCalls: ToolCallResult[];
  promptTokens: number;
  completionTokens: number;
}


/**
 * An empty (or too long) answer gets one correction; a second one ends the run as a technical failure, since a
 * model that answers nothing twice will not answer on a third try either.
 */
const emptyAnswersTwice: StopCondition = (progress) => (progress.corrections >= 2 ? 'error_breaker' : undefined);

/**
 * ReActEngine.run (seed 000 section 5): answers one question with read-only tools on the one shared loop,
 * think -> act -> observe, and returns only the final answer. Calls to any tool outside READ_ONLY_TOOLS are
 * refused in code, never run. Limits are stop conditions (error breaker, token budget, rounds, in the seed's
 * order of precedence); when one ends the run the user gets the seed's message for it in their language.
 * Thoughts and observations stay in the trace (the loop's step spans). Gateway errors (LLM_*, CANCELLED)
 * propagate: they are not an answer, and the caller decides what to tell the user.
 */
export async function investigate(input: InvestigateInput): Promise<InvestigateResult> {
  const question = input.question.trim();
  checkInput(input, question);
  const declared = input.agents.get(INVESTIGATE_AGENT);
  const allowed = (declared.requestTools ?? []).filter((name) => input.registry.get(name));
  const tools = allowed.map((name) => ({ name, description: input.registry.get(name)!.description }));
  // The limits are the assistant's settings; the rest of the definition is fixed.
  const definition = {
    ...declared,
    stop: { ...declared.stop, errorBreaker: input.limits.maxFailedToolCalls ?? DEFAULT_MAX_FAILED_TOOL_CALLS, reasoningBudget: input.limits.tokenBudget, maxRounds: input.limits.maxIterations },
  };

  const outcome = await runDefinition<QuestionInput, string>(definition, {
    llm: input.llm,
    trace: input.trace,
    registry: input.registry,
    input: { question, language: input.language, context: input.context, tools },
    modelName: input.model,
    extraStop: [emptyAnswersTwice],
    observations: questionObservations(allowed),
    onEvent: input.onEvent ? finalAnswerOnly(input.onEvent) : undefined,
    onMessages: input.onMessages,
    signal: input.signal,
  });

  const { progress, toolCalls } = outcome;
  const usage = { rounds: progress.rounds, toolCalls, promptTokens: progress.promptTokens, completionTokens: progress.completionTokens };
  if (outcome.kind === 'final') return { ok: true, answer: outcome.value, ending: 'answer', ...usage };
  // Its decisions are native tool calls, so no action can make it wait for a person.
  if (outcome.kind === 'waiting') throw new ClinAgentError('INTERNAL', 'The read-only question engine stopped to wait for a person, which its definition does not allow.');
  const ending = endingOf(outcome.reason);
  return { ok: false, answer: endingMessage(ending, input.language), ending, ...usage };
}

function checkInput(input: InvestigateInput, question: string): void {
  const problems: string[] = [];
  if (!question) problems.push('question: empty; pass the user\'s question');
  if (input.language !== 'zh' && input.language !== 'en') problems.push('language: must be "zh" or "en"');
  if (!Number.isInteger(input.limits.maxIterations) || input.limits.maxIterations < 1) problems.push('limits.maxIterations: a whole number of model calls, at least 1 (seed 000 uses 5)');
  if (!(input.limits.tokenBudget > 0)) problems.push('limits.tokenBudget: a positive number of tokens (seed 000 uses 4000)');
  const breaker = input.limits.maxFailedToolCalls;
  if (breaker !== undefined && (!Number.isInteger(breaker) || breaker < 1)) problems.push('limits.maxFailedToolCalls: a whole number, at least 1 (default 2)');
  if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `The question cannot be investigated:\n${problems.join('\n')}`, { issues: problems });
}
