import { ClinAgentError } from '../../core/errors.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { trimToTokens } from '../../core/tokenizer.js';
import type { TraceScope } from '../../core/trace/store.js';
import { runDefinition } from '../../runtime/loop/index.js';
import { routeByRules } from './route-by-rules.js';
import type { AgentRegistry } from '../../runtime/definitions/index.js';
import { ROUTE_INTENT_AGENT, ROUTE_INTENT_DEFINITION } from './route-intent-definition.js';
import { detectLanguage, type Intent, type RoutedMessage, type RoutingFallback, type SkillOption } from './route-intent-types.js';

export { routeByRules } from './route-by-rules.js';
export { detectLanguage, MAX_INTENTS, type Intent, type IntentType, type RoutedMessage, type RoutingFallback } from './route-intent-types.js';

/** A message is classified by its opening; past this the classifier call only costs tokens. */
const MAX_MESSAGE_TOKENS = 2000;

/**
 * Routes one chat message (seed 002's intent detection, seed 000 V2.9's intent split): the model classifies it
 * with a structured JSON answer; when the model is unavailable (any gateway error: not configured, timeouts,
 * 5xx after the client's retries) or its answer stays unusable after one correction, the keyword rules do,
 * and `fallbackReason` says why. Only a cancelled request (the user stopped) propagates.
 */
export async function routeIntent(
  /** `agents`: the registry the router's definition is resolved from. */
  deps: { llm: LlmGateway; trace: TraceScope; agents: Pick<AgentRegistry, 'get'> },
  message: string,
  options: { skills: ReadonlyArray<SkillOption>; signal?: AbortSignal },
): Promise<RoutedMessage> {
  const text = typeof message === 'string' ? message.trim() : '';
  if (!text) return { ...routeByRules(text, options), fallbackReason: 'the message is empty', fallback: 'empty_message' };
  const skills = options.skills ?? [];
  const forModel = trimToTokens(text, MAX_MESSAGE_TOKENS);

  let intents: Intent[] | undefined;
  let fallbackReason: string;
  let fallback: RoutingFallback = 'answer_unusable';
  try {
    const outcome = await runDefinition(deps.agents.get(ROUTE_INTENT_AGENT), {
      llm: deps.llm,
      trace: deps.trace,
      input: { message: forModel, skills },
      signal: options.signal,
    });
    if (outcome.kind === 'final') intents = outcome.value;
    const problems = outcome.kind === 'stopped' && outcome.lastFailure?.kind === 'answer' ? outcome.lastFailure.problems.join('; ') : 'no answer';
    fallbackReason = `the model's answer was still unusable after one correction (${problems})`;
  } catch (error) {
    if (!ClinAgentError.isInstance(error) || error.code === 'CANCELLED') throw error;
    fallbackReason = `the model is unavailable (${error.code}: ${error.message})`;
    fallback = 'model_unavailable';
  }
  if (intents) return { intents, by: 'model', language: detectLanguage(text) };
  return { ...routeByRules(text, { skills }), fallbackReason, fallback };
}
