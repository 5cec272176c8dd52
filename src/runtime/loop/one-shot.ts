import { ClinAgentError } from '../../core/errors.js';
import type { TraceScope } from '../../core/trace/store.js';
import type { LoopOutcome } from './run-loop.js';

/**
 * A one-shot answer that stopped at the token limit is a shorter text than the model meant ("- Reports should s"):
 * repairing its JSON or keeping its text would store that fragment as finished, so callers that keep what the model
 * wrote (memory writers, conversation summaries) refuse it with this error. The loop does the same for its own answers.
 */
function cutOffError(what: string, completionTokens: number, details: Record<string, unknown>): ClinAgentError {
  return new ClinAgentError(
    'LLM_BAD_RESPONSE',
    `The model's ${what} was cut off at its output token limit (finish_reason "length" after ${completionTokens} tokens), so it is not a finished answer.`,
    { ...details, finishReason: 'length', completionTokens },
  );
}

/** A run some library caller makes without a trace: its spans go nowhere. */
export const UNTRACED: TraceScope = { traceId: '', span: (_kind, _name, _input, fn) => fn() };

/**
 * The answer of a definition with one round (a summary, a distillation, a verdict): its value, or the error that
 * says why there is none. An answer cut off at the token limit is refused (cutOffError says why); an answer its
 * schema refused is told in the schema's own words (written for a person: with one round no correction follows).
 */
export function oneRoundAnswer<T>(outcome: LoopOutcome<T>, what: string, details: Record<string, unknown> = {}, tell: (why: string) => string = (why) => why): T {
  if (outcome.kind === 'final') return outcome.value;
  if (outcome.kind === 'waiting') throw new ClinAgentError('INTERNAL', `The ${what} ended waiting for a person, which a one-round definition does not allow.`, details);
  const last = outcome.lastFailure;
  if (outcome.reason === 'truncated' || (last?.kind === 'answer' && last.truncated)) throw cutOffError(what, outcome.progress.completionTokens, details);
  const problems = last?.kind === 'answer' ? last.problems : [];
  const told = problems.map((problem) => problem.replace(/^\(root\): /, '')).join(' ');
  throw new ClinAgentError('LLM_BAD_RESPONSE', tell(told || `The model gave no usable ${what} (${outcome.reason}).`), { ...details, problems });
}
