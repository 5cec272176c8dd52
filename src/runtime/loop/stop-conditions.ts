/**
 * Limits are small predicates over what the loop has done so far (after vercel/ai's stop conditions): the loop
 * stops when any returns a reason. Agents pass the ones they want; none is an `if` inside the loop.
 */

/** What the loop has done so far, as the stop conditions see it. */
export interface LoopProgress {
  /** Model calls made. */
  rounds: number;
  /** Rounds whose tool calls all succeeded. */
  toolRounds: number;
  /** Rounds with at least one failed or refused tool call. */
  failedToolRounds: number;
  /** Failed or refused tool calls since the last one that succeeded. */
  failedToolCallsInARow: number;
  /** Answers sent back by the validate hook (unparseable, a field missing), truncated answers included. */
  corrections: number;
  /** Answers cut off before they were complete (finish_reason "length", or JSON that ends open). */
  truncatedAnswers: number;
  /** Model calls that failed (unreachable, timed out), counted only when the loop treats them as attempts. */
  failedModelCalls: number;
  promptTokens: number;
  completionTokens: number;
}

/** `truncated`: the loop stopped right after an answer that was cut off, whichever limit fired. */
export type StopReason = 'max_rounds' | 'token_budget' | 'error_breaker' | 'retries_exhausted' | 'truncated';

export type StopCondition = (progress: Readonly<LoopProgress>) => StopReason | undefined;

/** At most `n` model calls. */
export const roundLimit = (n: number): StopCondition => (p) => (p.rounds >= n ? 'max_rounds' : undefined);

/** Stop once the run has used `maxTokens` prompt and completion tokens together. */
export const tokenBudget = (maxTokens: number): StopCondition => (p) => (p.promptTokens + p.completionTokens >= maxTokens ? 'token_budget' : undefined);

/** Stop after `n` failed tool calls in a row: the model is not going to fix its calls. */
export const errorBreaker = (n: number): StopCondition => (p) => (p.failedToolCallsInARow >= n ? 'error_breaker' : undefined);

/** Seed 000's soft-rule budget: unusable answers, rounds with a failed tool call and failed model calls count alike. */
export const attemptLimit = (n: number): StopCondition => (p) => (p.corrections + p.failedToolRounds + p.failedModelCalls >= n ? 'retries_exhausted' : undefined);

/** Stop after `n` unusable answers, whatever else the agent counts: a model that cannot answer in shape is asked again only so often. */
export const correctionLimit = (n: number): StopCondition => (p) => (p.corrections >= n ? 'retries_exhausted' : undefined);

/** Stop after `n` answers cut off by the token limit: asked again with the same limit, a model rarely gets shorter. */
export const truncationLimit = (n: number): StopCondition => (p) => (p.truncatedAnswers >= n ? 'truncated' : undefined);

/**
 * A budget for what the run adds to its starting context: the model's answers and the growth of the prompt
 * (tool calls, observations, corrections), not the context every round sends again (system prompt, memory, earlier
 * turns). An agent whose fixed context is large (the trial assistant's hot memory may hold 2000 tokens) still
 * gets `maxTokens` to reason with; `tokenBudget` would spend it on re-sending the same context. The first
 * round's prompt is taken as that context, so the count uses the same figures as every other limit.
 */
export const reasoningBudget = (maxTokens: number): StopCondition => {
  let context: number | undefined;
  return (p) => {
    if (p.rounds === 0) return undefined;
    context ??= p.promptTokens;
    return p.promptTokens - p.rounds * context + p.completionTokens >= maxTokens ? 'token_budget' : undefined;
  };
};
