import { arityProblems, isLiteral, type ClinicalOperator } from './clinical-operator.js';
import { describeValue, OperatorError } from './operator-error.js';

const NAME = 'matches';

/**
 * Longest pattern accepted. JavaScript regular expressions backtrack, so a pattern with nested quantifiers
 * such as `(a+)+$` can take exponential time on a short non-matching value and block the event loop for every
 * record behind it. A length limit cannot prove a pattern safe, but 200 characters is ample for any field
 * format (subject ids, codes, units) and keeps each pattern short enough for a reviewer to read whole and
 * spot nested quantifiers; it also bounds what a mistaken or hostile rule upload can make us compile.
 */
export const MAX_PATTERN_LENGTH = 200;

/** `g` and `y` make `test()` resume from `lastIndex`, so a cached RegExp would alternate answers; not allowed. */
const ALLOWED_FLAGS = /^[imsu]*$/;

/** Rules built from data (a pattern held in a field) could otherwise grow the cache without bound. */
const MAX_CACHED_PATTERNS = 256;

/** Why the pattern or flags cannot be used, or undefined when they can. */
export function patternProblem(pattern: unknown, flags: unknown): string | undefined {
  if (typeof pattern !== 'string') return `pattern must be a string, got ${describeValue(pattern)}`;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `pattern is ${pattern.length} characters, over the ${MAX_PATTERN_LENGTH}-character limit that guards against runaway backtracking; simplify it`;
  }
  if (typeof flags !== 'string' || !ALLOWED_FLAGS.test(flags)) return `flags ${describeValue(flags)} may only combine i, m, s and u`;
  try {
    new RegExp(pattern, flags);
    return undefined;
  } catch (error) {
    return `pattern ${describeValue(pattern)} is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * `{"matches": [value, pattern, flags?]}`: true when the value (a string, or a finite number written in
 * decimal) matches. A missing value does not match. Each engine gets its own pattern cache.
 */
export function createMatchesOperator(): ClinicalOperator {
  const cache = new Map<string, RegExp>();

  function regexFor(pattern: unknown, flags: unknown): RegExp {
    // Length-prefixed so invalid flags such as "i/a" with pattern "b" cannot hit the entry of "i" with "a/b".
    const key = `${String(flags).length}:${String(flags)}/${String(pattern)}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const problem = patternProblem(pattern, flags);
    if (problem) throw new OperatorError(NAME, problem);
    if (cache.size >= MAX_CACHED_PATTERNS) cache.clear();
    const regex = new RegExp(pattern as string, flags as string);
    cache.set(key, regex);
    return regex;
  }

  return {
    name: NAME,
    evaluate: (args) => {
      // The pattern is checked before the value, so a bad pattern shows up even on records with the value missing.
      const regex = regexFor(args[1], args[2] ?? '');
      const value = args[0];
      if (typeof value === 'string') return regex.test(value);
      if (typeof value === 'number' && Number.isFinite(value)) return regex.test(String(value));
      return false;
    },
    checkArgs: (args) => {
      const arity = arityProblems(args, 2, 3, '{"matches": [value, "pattern", "flags"]}');
      if (arity.length || !isLiteral(args[1])) return arity;
      const flags = args.length > 2 ? args[2] : '';
      const problem = patternProblem(args[1], isLiteral(flags) ? flags : '');
      return problem ? [problem] : [];
    },
  };
}
