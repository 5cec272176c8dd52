import { ClinAgentError } from '../../core/errors.js';

/**
 * Errors the read tools throw. The registry hands their message to the model as the failed call's result,
 * so each says what to do next in the model's own terms (tool names, argument names).
 */
export function recordNotFound(recordId: string): ClinAgentError {
  // Worded the same whether the id is unknown or belongs to another project: the tools see one project only.
  return new ClinAgentError('NOT_FOUND', `record ${JSON.stringify(recordId)} does not exist in this project; list records with get_project_stats or ask for an existing id`, { recordId });
}

/** Up to `max` names, then how many more, so an error stays short in a prompt. */
export function someOf(names: readonly string[], max = 15): string {
  if (names.length === 0) return '(none)';
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}
