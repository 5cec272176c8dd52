import { ClinAgentError } from '../core/errors.js';

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
