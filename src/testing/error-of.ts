import { ClinAgentError } from '../core/errors.js';

/** The ClinAgentError a synchronous call throws, to assert on its code, message and details; anything else fails. */
export function errorOf(fn: () => unknown): ClinAgentError {
  try {
    fn();
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

/** The ClinAgentError a promise (or a value that may be one) rejects with; resolving, or another error, fails. */
export async function rejectionOf(pending: unknown): Promise<ClinAgentError> {
  const error = await Promise.resolve(pending).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  if (!ClinAgentError.isInstance(error)) throw error;
  return error;
}
