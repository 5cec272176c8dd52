import { describe, expect, it } from 'vitest';
import { reasoningBudget, tokenBudget, type LoopProgress } from './stop-conditions.js';

const after = (rounds: number, promptTokens: number, completionTokens: number): LoopProgress => ({ rounds, promptTokens, completionTokens, toolRounds: rounds, failedToolRounds: 0, failedToolCallsInARow: 0, corrections: 0, truncatedAnswers: 0, failedModelCalls: 0 });

describe('token limits', () => {
  it('tokenBudget counts every prompt in full, the context sent again each round included', () => {
    expect(tokenBudget(4000)(after(1, 3000, 40))).toBeUndefined();
    expect(tokenBudget(4000)(after(2, 6150, 80))).toBe('token_budget');
  });

  it('reasoningBudget counts what the run adds to its first prompt: answers and the growth of the prompt', () => {
    const stop = reasoningBudget(4000);
    expect(stop(after(0, 0, 0))).toBeUndefined();
    // A 3000-token context (hot memory) in every round does not spend the budget...
    expect(stop(after(1, 3000, 40))).toBeUndefined();
    expect(stop(after(2, 3000 + 3150, 80))).toBeUndefined();
    expect(stop(after(4, 3000 + 3150 + 3300 + 3450, 160))).toBeUndefined();
    // ...observations that make the prompt grow do: 3000 + 7000 again after round 2 is 7000 + 2 answers.
    const growing = reasoningBudget(4000);
    expect(growing(after(1, 3000, 40))).toBeUndefined();
    expect(growing(after(2, 3000 + 7000, 80))).toBe('token_budget');
  });
});
