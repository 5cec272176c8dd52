import OpenAI from 'openai';
import { ClinAgentError } from '../errors.js';
import { redactText } from '../logger.js';

/**
 * The one place where the `openai` client's error subclasses become our LLM_* codes. The client has already
 * retried 408/409/429/5xx with backoff by the time an error reaches here, so every message says what the
 * reader can change.
 */
export function toLlmError(error: unknown, where: { baseUrl?: string; model?: string; apiKey?: string; timeoutMs: number; what?: string }): ClinAgentError {
  if (ClinAgentError.isInstance(error)) return error;
  // The provider's error rides along as `cause`; scrub it first, so no later log line or trace can echo the key.
  scrubError(error, [where.apiKey]);
  const what = where.what ?? 'LLM';
  const endpoint = where.baseUrl ?? '(no base URL)';
  const detail = (e: unknown) => redactText(e instanceof Error ? e.message : String(e), [where.apiKey]);
  const details = { endpoint, model: where.model };
  if (error instanceof OpenAI.APIConnectionTimeoutError || (error instanceof Error && error.name === 'TimeoutError')) {
    return new ClinAgentError('LLM_TIMEOUT', `The ${what} endpoint ${endpoint} did not answer within ${where.timeoutMs} ms. Raise LLM_TIMEOUT_MS or check that the endpoint is up and not overloaded.`, details, { cause: error });
  }
  if (error instanceof OpenAI.APIUserAbortError) return cancelled(error, what);
  if (error instanceof OpenAI.APIConnectionError) {
    return new ClinAgentError('LLM_UNAVAILABLE', `Could not connect to the ${what} endpoint ${endpoint}: ${detail(error.cause ?? error)}. Check the base URL (it usually ends in /v1) and that the server is running.`, details, { cause: error });
  }
  if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
    return new ClinAgentError('LLM_AUTH_FAILED', `The ${what} endpoint ${endpoint} refused the API key (HTTP ${error.status}). Check ${what === 'embedding' ? 'EMBEDDING_API_KEY (or LLM_API_KEY)' : 'LLM_API_KEY'}.`, { ...details, httpStatus: error.status }, { cause: error });
  }
  if (error instanceof OpenAI.RateLimitError) {
    const retryAfter = Number(error.headers?.get('retry-after'));
    const retryAfterMs = Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined;
    return new ClinAgentError('LLM_RATE_LIMITED', `The ${what} endpoint is still rate limiting (HTTP 429) after retries. Wait${retryAfterMs ? ` ${retryAfterMs} ms` : ''} and try again, or lower concurrency.`, { ...details, retryAfterMs }, { cause: error });
  }
  if (error instanceof OpenAI.NotFoundError) {
    return new ClinAgentError('LLM_REQUEST_REJECTED', `The ${what} endpoint answered 404: the model "${where.model}" or the path does not exist at ${endpoint}. Check the model name and that the base URL ends in /v1.`, { ...details, httpStatus: 404 }, { cause: error });
  }
  if (error instanceof OpenAI.InternalServerError) {
    return new ClinAgentError('LLM_UNAVAILABLE', `The ${what} endpoint failed with HTTP ${error.status} after retries: ${detail(error)}. Try again later or check the server's logs.`, { ...details, httpStatus: error.status }, { cause: error });
  }
  if (error instanceof OpenAI.APIError) {
    return new ClinAgentError('LLM_REQUEST_REJECTED', `The ${what} endpoint rejected the request (HTTP ${error.status}): ${detail(error)}.`, { ...details, httpStatus: error.status }, { cause: error });
  }
  return new ClinAgentError('LLM_BAD_RESPONSE', `The ${what} endpoint gave an unusable answer: ${detail(error)}.`, details, { cause: error });
}

/**
 * The caller's AbortSignal fired (the client closed the stream, the user pressed Stop). Not a model failure and
 * nothing to retry, so its own code: CANCELLED (499).
 */
export function cancelled(cause?: unknown, what = 'LLM'): ClinAgentError {
  return new ClinAgentError('CANCELLED', `The ${what} call was cancelled by the caller before it finished. Nothing is wrong with the endpoint; run it again to get an answer.`, {}, cause === undefined ? undefined : { cause });
}

/** How deep a cause chain is followed; real chains are two or three long. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Masks the key in a provider error in place: message, stack (which repeats the message), the parsed error
 * body the `openai` client keeps on `.error`, and the same for every `cause` below it. Providers echo the key
 * they were given ("Incorrect API key provided: sk-..."), and the error object outlives this module.
 */
export function scrubError(error: unknown, secrets: ReadonlyArray<string | undefined>, depth = 0): void {
  if (!(error instanceof Error) || depth > MAX_CAUSE_DEPTH) return;
  const target = error as Error & { error?: unknown };
  try {
    target.message = redactText(target.message, secrets);
    if (typeof target.stack === 'string') target.stack = redactText(target.stack, secrets);
    if (target.error !== undefined) target.error = JSON.parse(redactText(JSON.stringify(target.error) ?? 'null', secrets));
  } catch {
    // A frozen or exotic error: the logger's stream filter still masks it on the way out.
  }
  scrubError(target.cause, secrets, depth + 1);
}
