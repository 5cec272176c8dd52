import { RE2JS } from 're2js';
import { arityProblems, isLiteral, type ClinicalOperator } from './clinical-operator.js';
import type { MatchingBudget } from './matching-budget.js';
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

/**
 * Largest compiled program accepted (re2js `programSize()`: instructions). Matching costs roughly instructions ×
 * characters, and the 200-character limit does not bound it: `(a|aa|aaa){999}!` is 16 characters and 8 994
 * instructions (0.1 s to compile, seconds to test on 20 000 characters). Field formats compile to 10-30
 * instructions; 1 000 leaves room for `{1,99}`-sized repetitions while refusing `{999}`.
 */
export const MAX_PROGRAM_SIZE = 1000;

/**
 * Longest value (in UTF-16 characters, as JavaScript counts) a pattern is tested against. Ids, codes and units
 * are far shorter; a longer value is an error for the rule rather than a silent "no match", so a 100 kB paste
 * into a code field is reported, not hidden.
 */
export const MAX_VALUE_LENGTH = 10_000;

/**
 * Compiling costs about 15 µs per instruction, some 100 matching steps' worth (see matching-budget.ts). Every
 * use of a pattern is charged as if it were compiled, cached or not, so a rule that reads many distinct patterns
 * from the data pays for compiling them, and the same record always gets the same answer whatever the cache holds.
 */
const COMPILE_STEPS_PER_INSTRUCTION = 100;

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

/**
 * The compiled pattern, or why the pattern or flags cannot be used; `instructions` is what compiling it built
 * (0 when it did not compile), which is what a refusal cost.
 */
type CheckedPattern = { regex: RE2JS; problem?: undefined } | { regex?: undefined; problem: string; instructions: number };

function checkPattern(pattern: unknown, flags: unknown): CheckedPattern {
  if (typeof pattern !== 'string') return { problem: `pattern must be a string, got ${describeValue(pattern)}`, instructions: 0 };
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return { problem: `pattern is ${pattern.length} characters, over the ${MAX_PATTERN_LENGTH}-character limit; simplify it`, instructions: 0 };
  }
  if (typeof flags !== 'string' || !ALLOWED_FLAGS.test(flags)) return { problem: `flags ${describeValue(flags)} may only combine i, m, s and u`, instructions: 0 };
  let regex: RE2JS;
  try {
    regex = compilePattern(pattern, flags);
  } catch (error) {
    const unsupported = UNSUPPORTED.find(([construct]) => construct.test(pattern));
    if (unsupported) {
      return { problem: `pattern ${describeValue(pattern)} cannot be used: ${unsupported[1]} by the linear-time matcher (RE2) that keeps rules from stalling; rewrite it without them`, instructions: 0 };
    }
    return { problem: `pattern ${describeValue(pattern)} is not a valid regular expression: ${(error as Error).message}`, instructions: 0 };
  }
  const size = regex.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    return {
      problem: `pattern ${describeValue(pattern)} compiles to ${size} instructions, over the ${MAX_PROGRAM_SIZE}-instruction limit (matching time grows with instructions × characters); use smaller repetition counts (e.g. {1,99} rather than {999}) or split it into several rules`,
      instructions: size,
    };
  }
  return { regex };
}

/** Why the pattern or flags cannot be used, or undefined when they can. */
function patternProblem(pattern: unknown, flags: unknown): string | undefined {
  return checkPattern(pattern, flags).problem;
}

/**
 * `{"matches": [value, pattern, flags?]}`: true when the value (a string, or a finite number written in
 * decimal) contains a match (anchor with ^ and $ for a whole-value match). A missing value does not match.
 * Each engine gets its own pattern cache; `budget` is the engine's per-evaluation allowance of matching work.
 */
export function createMatchesOperator(budget: MatchingBudget): ClinicalOperator {
  // Refusals are cached too: a hostile pattern repeated on every record is compiled once, not once a record.
  const cache = new Map<string, CheckedPattern>();

  function regexFor(pattern: unknown, flags: unknown): RE2JS {
    const checked = cachedCheck(pattern, flags);
    if (checked.regex) return checked.regex;
    // A pattern refused for its size cost a whole compile (0.1 s for {999}): charged like any other, it uses up
    // the budget, so a rule that goes on past refusals ({"try": ...} over a list of patterns) stops there.
    budget.spend(Math.max(1, checked.instructions) * COMPILE_STEPS_PER_INSTRUCTION);
    throw new OperatorError(NAME, checked.problem);
  }

  function cachedCheck(pattern: unknown, flags: unknown): CheckedPattern {
    // Only strings are cached: the number 5 must not find the entry of the pattern "5".
    if (typeof pattern !== 'string' || typeof flags !== 'string') return checkPattern(pattern, flags);
    // Length-prefixed so flags such as "i/a" with pattern "b" cannot hit the entry of "i" with "a/b".
    const key = `${flags.length}:${flags}/${pattern}`;
    let checked = cache.get(key);
    if (!checked) {
      checked = checkPattern(pattern, flags);
      if (cache.size >= MAX_CACHED_PATTERNS) cache.clear();
      cache.set(key, checked);
    }
    return checked;
  }

  /** Charges the pattern and the text it is about to test to the rule's budget; throws when they do not fit. */
  function charge(regex: RE2JS, text: string): void {
    if (text.length > MAX_VALUE_LENGTH) {
      throw new OperatorError(NAME, `the value is ${text.length} characters, over the ${MAX_VALUE_LENGTH}-character limit for pattern tests; correct the value, or if values this long are expected, test a part of it with {"substr": [value, 0, ${MAX_VALUE_LENGTH}]}`);
    }
    const steps = regex.programSize() * (COMPILE_STEPS_PER_INSTRUCTION + text.length);
    if (steps > budget.remainingSteps()) {
      // The rest of the budget goes too: a rule that swallows this error ({"try": ...}) compiles and tests nothing more.
      budget.spend(budget.remainingSteps());
      if (steps <= budget.limitSteps) throw budgetUsedUp(budget);
      throw new OperatorError(NAME, `testing ${text.length} characters against a pattern of ${regex.programSize()} instructions takes about ${steps} steps, over the ${budget.limitSteps} one rule may take on one record; use a simpler pattern, or test a shorter part of the value with {"substr": [value, 0, n]}`);
    }
    budget.spend(steps);
  }

  function test(regex: RE2JS, text: string): boolean {
    charge(regex, text);
    return regex.test(text);
  }

  return {
    name: NAME,
    evaluate: (args) => {
      // Once the budget is spent nothing more is compiled or tested, even inside a {"try": ...} that would go on.
      if (budget.remainingSteps() <= 0) throw budgetUsedUp(budget);
      // The pattern is checked before the value, so a bad pattern shows up even on records with the value missing.
      const regex = regexFor(args[1], args[2] ?? '');
      const value = args[0];
      if (typeof value === 'string') return test(regex, value);
      if (typeof value === 'number' && Number.isFinite(value)) return test(regex, String(value));
      charge(regex, '');
      return false;
    },
    checkArgs: (args) => {
      const arity = arityProblems(args, 2, 3, '{"matches": [value, "pattern", "flags"]}');
      if (arity.length) return arity;
      const problems: string[] = [];
      if (typeof args[0] === 'string' && args[0].length > MAX_VALUE_LENGTH) {
        problems.push(`the value is ${args[0].length} characters, over the ${MAX_VALUE_LENGTH}-character limit for pattern tests; shorten it`);
      }
      if (isLiteral(args[1])) {
        const flags = args.length > 2 ? args[2] : '';
        const problem = patternProblem(args[1], isLiteral(flags) ? flags : '');
        if (problem) problems.push(problem);
      }
      return problems;
    },
  };
}

function budgetUsedUp(budget: MatchingBudget): OperatorError {
  return new OperatorError(NAME, `this rule has used up the pattern matching one rule may do on one record (${budget.limitSteps} steps, counted as pattern instructions × characters tested); split it into several rules, or test fewer or shorter values`);
}
