import { AgentsError, MaxTurnsExceededError, ModelBehaviorError, ModelRefusalError } from '@openai/agents';
import OpenAI from 'openai';
import type { LlmConfig } from '../../../core/config.js';
import { ClinAgentError } from '../../../core/errors.js';
import { cancelled, toLlmError } from '../../../core/llm/errors.js';
import type { Scenario } from '../../scenarios/load.js';
import { SdkOpenAI } from './sdk-provider.js';

/**
 * Why an SDK run threw, as the error the result carries: the limit of model calls, a model that broke the SDK's
 * rules, or the endpoint (worded by the gateway's one mapping, core/llm/errors.ts, so both engines say the same
 * thing about the same endpoint). Anything else is returned as it is: the run reports it as an internal error.
 */
export function sdkRunError(error: unknown, scenario: Scenario, llm: LlmConfig | undefined, signal: AbortSignal | undefined): unknown {
  if (ClinAgentError.isInstance(error)) return error;
  if (signal?.aborted) return cancelled(error);
  const details = { scenarioId: scenario.id, engine: 'openai-agents' };
  if (error instanceof MaxTurnsExceededError) {
    return new ClinAgentError('LLM_BAD_RESPONSE', `The run stopped without an answer: the limit of ${maxTurnsOf(scenario)} model calls of scenario ${scenario.id} was reached (stop.max_rounds, or max_tool_rounds + 1, in ${scenario.sourceFile}). Ask a narrower question, or raise the limit.`, { ...details, reason: 'max_turns' });
  }
  if (error instanceof ModelRefusalError) {
    return new ClinAgentError('LLM_BAD_RESPONSE', `The model refused to answer: ${error.message}. Ask in other words.`, { ...details, reason: 'refusal' });
  }
  if (error instanceof ModelBehaviorError) {
    return new ClinAgentError('LLM_BAD_RESPONSE', `The model gave no usable answer (${error.message}), so none is shown. Try again, or ask in other words.`, { ...details, reason: 'model_behavior' });
  }
  const gatewayError = asGatewayError(error);
  if (gatewayError && llm) return toLlmError(gatewayError, { ...llm, what: 'LLM' });
  if (error instanceof AgentsError) {
    return new ClinAgentError('LLM_BAD_RESPONSE', `The OpenAI Agents SDK stopped the run of scenario ${scenario.id}: ${error.message}.`, { ...details, reason: error.constructor.name });
  }
  return error;
}

/** Model calls a run of the scenario may make: stop.max_rounds, else one per tool round and one for the answer. */
export function maxTurnsOf(scenario: Scenario): number {
  return scenario.stop.maxRounds ?? (scenario.stop.maxToolRounds ?? 0) + 1;
}

/**
 * An error of the SDK's openai 7 client as the gateway's openai 6 one, so toLlmError (which knows the 6 classes)
 * words it; undefined when it is not a client error. The classes are the same in both versions.
 */
function asGatewayError(error: unknown): Error | undefined {
  if (error instanceof SdkOpenAI.APIUserAbortError) return new OpenAI.APIUserAbortError();
  if (error instanceof SdkOpenAI.APIConnectionTimeoutError) return new OpenAI.APIConnectionTimeoutError();
  if (error instanceof SdkOpenAI.APIConnectionError) return new OpenAI.APIConnectionError({ cause: error.cause instanceof Error ? error.cause : undefined });
  if (error instanceof SdkOpenAI.APIError) return OpenAI.APIError.generate(error.status, error.error as object | undefined, error.message, error.headers);
  return undefined;
}
