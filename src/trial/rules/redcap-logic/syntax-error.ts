import { ClinAgentError } from '../../../core/errors.js';

/** Every problem in REDCap logic is the author's to fix, so it is VALIDATION_FAILED with where it is. */
export function syntaxError(problem: string, position: number, details: Record<string, unknown> = {}): ClinAgentError {
  return new ClinAgentError('VALIDATION_FAILED', `REDCap logic: ${problem}.`, { position, ...details });
}
