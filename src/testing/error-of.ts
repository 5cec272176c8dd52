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
