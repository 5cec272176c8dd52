/**
 * How much pattern matching one rule evaluation may do, in steps of "pattern instructions × (characters tested +
 * 100 for compiling)". Rules run on the server's event loop and a rule evaluation cannot be interrupted once
 * started, so this bound is what keeps each piece of synchronous work short (the rule runner lets the loop turn
 * between rules, see run-rules.ts).
 *
 * 500 000 steps take at most about 40 ms with re2js on a quiet 2-core machine (0.2 s under heavy load) for the
 * slowest patterns there are: ones whose DFA explodes on random text (`[ab]*a[ab]{20}$` on 10 000 letters), where
 * re2js builds a state per character before falling back to its NFA. Ordinary field formats take a millisecond
 * (`npm run bench:rules` prints the figures). It is ample for real checks: a 30-instruction subject-id pattern
 * may test values up to the 10 000-character limit, a 1 000-instruction one values of 400 characters.
 */
export const MAX_MATCHING_STEPS_PER_RULE = 500_000;

/** Shared by the operators of one engine; reset at the start of each rule evaluation (see rule-engine.ts). */
export interface MatchingBudget {
  readonly limitSteps: number;
  /** A new rule evaluation starts with the whole budget. */
  reset(): void;
  remainingSteps(): number;
  spend(steps: number): void;
}

export function createMatchingBudget(limitSteps = MAX_MATCHING_STEPS_PER_RULE): MatchingBudget {
  let spentSteps = 0;
  return {
    limitSteps,
    reset: () => {
      spentSteps = 0;
    },
    remainingSteps: () => Math.max(0, limitSteps - spentSteps),
    spend: (steps) => {
      spentSteps += steps;
    },
  };
}
