import OpenAI from 'openai';
import { ClinAgentError, type ErrorCode } from '../errors.js';
import { redactText } from '../logger.js';

/**
 * The operator's side of an LLM_* error: which endpoint, which timeout or setting, what the model server said. It
 * rides as the `cause` of the ClinAgentError, so the log (pino prints the cause chain) and the trace's llm span
 * keep it, while the message users read (API responses, run results, SSE error events) is a plain sentence that
 * names no URL and quotes nothing the model server said.
 */
class LlmOperatorDetail extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LlmOperatorDetail';
  }
}

/** The operator's text of an error: the LLM_* error's own detail when it has one, its message otherwise. */
export function operatorDetailOf(error: unknown): string {
  if (ClinAgentError.isInstance(error) && error.cause instanceof LlmOperatorDetail) return `${error.message} [operator: ${error.cause.message}]`;
  return error instanceof Error ? error.message : String(error);
}

/** An LLM_* error: `user` for whoever asked, `operator` for the log and the trace. */
export function llmError(code: ErrorCode, user: string, operator: string, details: Record<string, unknown>, providerError?: unknown): ClinAgentError {
  return new ClinAgentError(code, user, details, { cause: new LlmOperatorDetail(operator, providerError === undefined ? undefined : { cause: providerError }) });
}

/**
 * The one place where the `openai` client's error subclasses become our LLM_* codes. The client has already
 * retried 408/409/429/5xx with backoff by the time an error reaches here. The user's sentence says what they can
 * do (wait, try again, ask an administrator); the operator's names the endpoint and the setting to change.
 */
export function toLlmError(error: unknown, where: { baseUrl?: string; model?: string; apiKey?: string; timeoutMs: number; what?: string }): ClinAgentError {
  if (ClinAgentError.isInstance(error)) return error;
  // The provider's error rides along as `cause`; scrub it first, so no later log line or trace can echo the key.
  scrubError(error, [where.apiKey]);
  const what = where.what ?? 'LLM';
  const service = what === 'embedding' ? 'The embedding service' : 'The language model service';
  const endpoint = where.baseUrl ?? '(no base URL)';
  const detail = (e: unknown) => redactText(e instanceof Error ? e.message : String(e), [where.apiKey]);
  // No endpoint here: details go to users with the message.
  const details = { model: where.model };
  if (error instanceof OpenAI.APIConnectionTimeoutError || (error instanceof Error && error.name === 'TimeoutError')) {
    return llmError('LLM_TIMEOUT', `${service} did not answer in time. Try again in a few minutes; if it keeps happening, tell your administrator.`, `The ${what} endpoint ${endpoint} did not answer within ${where.timeoutMs} ms. Raise LLM_TIMEOUT_MS or check that the endpoint is up and not overloaded.`, details, error);
  }
  if (error instanceof OpenAI.APIUserAbortError) return cancelled(error, what);
  if (error instanceof OpenAI.APIConnectionError) {
    return llmError('LLM_UNAVAILABLE', `${service} cannot be reached right now. Try again later; if it keeps happening, tell your administrator.`, `Could not connect to the ${what} endpoint ${endpoint}: ${detail(error.cause ?? error)}. Check the base URL (it usually ends in /v1) and that the server is running.`, details, error);
  }
  if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
    return llmError('LLM_AUTH_FAILED', `${service} refused ClinAgent's credentials (HTTP ${error.status}). An administrator needs to check its API key.`, `The ${what} endpoint ${endpoint} refused the API key (HTTP ${error.status}): ${detail(error)}. Check ${what === 'embedding' ? 'EMBEDDING_API_KEY (or LLM_API_KEY)' : 'LLM_API_KEY'}.`, { ...details, httpStatus: error.status }, error);
  }
  if (error instanceof OpenAI.RateLimitError) {
    const retryAfter = Number(error.headers?.get('retry-after'));
    const retryAfterMs = Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined;
    const wait = retryAfterMs ? `Wait ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s` : 'Wait a minute';
    return llmError('LLM_RATE_LIMITED', `${service} is busy (too many requests). ${wait} and try again.`, `The ${what} endpoint ${endpoint} is still rate limiting (HTTP 429) after retries${retryAfterMs ? ` (retry-after ${retryAfterMs} ms)` : ''}. Lower concurrency or raise the endpoint's quota.`, { ...details, retryAfterMs }, error);
  }
  if (error instanceof OpenAI.NotFoundError) {
    return llmError('LLM_REQUEST_REJECTED', `${service} does not know the configured model. An administrator needs to check the model settings.`, `The ${what} endpoint answered 404: the model "${where.model}" or the path does not exist at ${endpoint}: ${detail(error)}. Check the model name and that the base URL ends in /v1.`, { ...details, httpStatus: 404 }, error);
  }
  if (error instanceof OpenAI.InternalServerError) {
    return llmError('LLM_UNAVAILABLE', `${service} failed (HTTP ${error.status}) and is unavailable right now. Try again later.`, `The ${what} endpoint ${endpoint} failed with HTTP ${error.status} after retries: ${detail(error)}. Check the server's logs.`, { ...details, httpStatus: error.status }, error);
  }
  if (error instanceof OpenAI.APIError) {
    return llmError('LLM_REQUEST_REJECTED', `${service} rejected the request (HTTP ${error.status}). Try again; if it keeps happening, tell your administrator.`, `The ${what} endpoint ${endpoint} rejected the request (HTTP ${error.status}): ${detail(error)}.`, { ...details, httpStatus: error.status }, error);
  }
  return llmError('LLM_BAD_RESPONSE', `${service} gave an answer ClinAgent could not read. Try again; if it keeps happening, tell your administrator.`, `The ${what} endpoint ${endpoint} gave an unusable answer: ${detail(error)}.`, details, error);
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
function scrubError(error: unknown, secrets: ReadonlyArray<string | undefined>, depth = 0): void {
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
