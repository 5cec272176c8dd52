import { ClinAgentError } from '../core/errors.js';
import type { ChatResponse } from '../core/llm/types.js';

/**
 * The memory writers (distillation, weekly and yearly reports) call the model once, outside the agent loop, so
 * they refuse a cut-off answer here themselves: an answer that stopped at the token limit is a shorter text than
 * the model meant ("- Reports should s"), and repairing its JSON or keeping its text would store that fragment as
 * finished. The caller's job retries, or the person is told; nothing is stored.
 */
export function assertComplete(response: Pick<ChatResponse, 'finishReason' | 'usage'>, what: string, details: Record<string, unknown> = {}): void {
  if (response.finishReason !== 'length') return;
  throw new ClinAgentError(
    'LLM_BAD_RESPONSE',
    `The model's ${what} was cut off at its output token limit (finish_reason "length" after ${response.usage.completionTokens} tokens), so it is not a finished answer.`,
    { ...details, finishReason: response.finishReason, completionTokens: response.usage.completionTokens },
  );
}

/**
 * A failed model step of a memory writer (an outage, a timeout, an answer refused) told with what it means for the
 * memory: nothing was stored, and what stands instead. `tell` gets the failure's own message (the why). The code
 * stays, so a job still retries what is retryable and a route answers that code's status (502, 503, 504; never a
 * 500); a cancellation and foreign errors pass through unchanged.
 */
export function nothingStored(error: unknown, tell: (why: string) => string): unknown {
  if (!ClinAgentError.isInstance(error) || error.code === 'CANCELLED') return error;
  // The original cause stays the cause: an LLM error's operator detail (endpoint, the server's words) rides there.
  return new ClinAgentError(error.code, tell(error.message), { ...error.details, stored: false }, { cause: error.cause ?? error });
}
