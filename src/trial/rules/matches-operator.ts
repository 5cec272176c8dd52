import { RE2JS } from 're2js';
import { arityProblems, isLiteral, type ClinicalOperator } from './clinical-operator.js';
import { describeValue, OperatorError } from './operator-error.js';

const NAME = 'matches';

/**
 * Longest pattern accepted. Matching time is linear (see below), so this no longer guards against runaway
 * backtracking; it bounds what a mistaken or hostile rule upload can make us compile, and 200 characters is
 * ample for any field format (subject ids, codes, units) while short enough for a reviewer to read whole.
 */
export const MAX_PATTERN_LENGTH = 200;

/** `g` and `y` would mean resuming from a last index, which a yes/no test has no use for; not allowed. */
const ALLOWED_FLAGS = /^[imsu]*$/;

/** Rules built from data (a pattern held in a field) could otherwise grow the cache without bound. */
const MAX_CACHED_PATTERNS = 256;

/** JavaScript flags onto RE2 flags. `u` needs none: RE2 always matches by code point. */
const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** Constructs a backtracking engine supports and RE2 does not, with the reason a rule author can act on. */
const UNSUPPORTED: Array<[RegExp, string]> = [
  [/\(\?<?[=!]/, 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported'],
  [/\\[1-9]|\\k</, 'backreferences (\\1, \\k<name>) are not supported'],
];

/**
 * Compiles with re2js, a pure-JavaScript port of RE2: matching takes time linear in the value's length
 * whatever the pattern, so a rule such as `^(\w+\s?)*$` cannot block the event loop (V8's backtracking
 * RegExp takes minutes on 30 letters and a "!"). JavaScript syntax such as `\u00e9` and `(?<name>...)` is
 * translated first. The price is RE2's syntax: no backreferences and no lookaround.
 */
function compilePattern(pattern: string, flags: string): RE2JS {
  let bits = 0;
  for (const flag of flags) bits |= FLAG_BITS[flag] ?? 0;
  return RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
}

/** Why the pattern or flags cannot be used, or undefined when they can. */
export function patternProblem(pattern: unknown, flags: unknown): string | undefined {
  if (typeof pattern !== 'string') return `pattern must be a string, got ${describeValue(pattern)}`;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `pattern is ${pattern.length} characters, over the ${MAX_PATTERN_LENGTH}-character limit; simplify it`;
  }
  if (typeof flags !== 'string' || !ALLOWED_FLAGS.test(flags)) return `flags ${describeValue(flags)} may only combine i, m, s and u`;
  try {
    compilePattern(pattern, flags);
    return undefined;
  } catch (error) {
    const unsupported = UNSUPPORTED.find(([construct]) => construct.test(pattern));
    if (unsupported) {
      return `pattern ${describeValue(pattern)} cannot be used: ${unsupported[1]} by the linear-time matcher (RE2) that keeps rules from stalling; rewrite it without them`;
    }
    return `pattern ${describeValue(pattern)} is not a valid regular expression: ${(error as Error).message}`;
  }
}

/**
 * `{"matches": [value, pattern, flags?]}`: true when the value (a string, or a finite number written in
 * decimal) contains a match (anchor with ^ and $ for a whole-value match). A missing value does not match.
 * Each engine gets its own pattern cache.
 */
export function createMatchesOperator(): ClinicalOperator {
  const cache = new Map<string, RE2JS>();

  function regexFor(pattern: unknown, flags: unknown): RE2JS {
    // Length-prefixed so invalid flags such as "i/a" with pattern "b" cannot hit the entry of "i" with "a/b".
    const key = `${String(flags).length}:${String(flags)}/${String(pattern)}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const problem = patternProblem(pattern, flags);
    if (problem) throw new OperatorError(NAME, problem);
    if (cache.size >= MAX_CACHED_PATTERNS) cache.clear();
    const regex = compilePattern(pattern as string, flags as string);
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
