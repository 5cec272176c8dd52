import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { compileRules } from './compile-rules.js';
import { MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE, MAX_VALUE_LENGTH } from './matches-operator.js';
import { MAX_MATCHING_STEPS_PER_RULE } from './matching-budget.js';
import { createRuleEngine } from './rule-engine.js';

const engine = createRuleEngine();
const subjectId = engine.compile({ matches: [{ var: 'subject_id' }, '^S\\d{3}$'] });

describe('matches', () => {
  it('tests a string against the pattern', () => {
    expect(subjectId({ subject_id: 'S001' })).toBe(true);
    expect(subjectId({ subject_id: 'S01' })).toBe(false);
    expect(subjectId({ subject_id: 'XS001' })).toBe(false);
  });

  it('treats a missing or non-text value as not matching', () => {
    expect(subjectId({})).toBe(false);
    expect(subjectId({ subject_id: null })).toBe(false);
    expect(subjectId({ subject_id: ['S001'] })).toBe(false);
  });

  it('tests finite numbers by their decimal text', () => {
    expect(engine.compile({ matches: [{ var: 'n' }, '^\\d{2}$'] })({ n: 42 })).toBe(true);
  });

  it('applies flags i, m, s and u', () => {
    expect(engine.compile({ matches: [{ var: 'x' }, '^s\\d+$', 'i'] })({ x: 'S12' })).toBe(true);
    expect(engine.compile({ matches: [{ var: 'x' }, '^肺', 'u'] })({ x: '肺炎' })).toBe(true);
  });

  it('gives the same answer on repeated calls (no stateful g or y flag)', () => {
    const rule = engine.compile({ matches: [{ var: 'x' }, { var: 'pattern' }, 'i'] });
    for (let i = 0; i < 3; i++) expect(rule({ x: 'abc', pattern: 'B' })).toBe(true);
    expect(() => engine.compile({ matches: [{ var: 'x' }, { var: 'p' }, { var: 'f' }] })({ x: 'a', p: 'a', f: 'g' })).toThrow(/flags "g" may only combine i, m, s and u/);
  });

  it('throws at run time for an invalid or over-long pattern taken from the data', () => {
    const rule = engine.compile({ matches: [{ var: 'x' }, { var: 'pattern' }] });
    expect(() => rule({ x: 'a', pattern: '(' })).toThrow(/matches: pattern "\(" is not a valid regular expression/);
    expect(() => rule({ pattern: '(' })).toThrow(/not a valid regular expression/);
    expect(() => rule({ x: 'a', pattern: 'a'.repeat(MAX_PATTERN_LENGTH + 1) })).toThrow(/over the 200-character limit/);
    expect(rule({ x: 'a', pattern: 'a'.repeat(MAX_PATTERN_LENGTH) })).toBe(false);
  });

  it('answers a pattern with nested quantifiers in linear time instead of backtracking for minutes', () => {
    // V8's RegExp explores 2^30 ways to split the letters before giving up; RE2 never backtracks.
    const rule = engine.compile({ matches: [{ var: 'x' }, '^(\\w+\\s?)*$'] });
    expect(rule({ x: 'a'.repeat(30) + '!' })).toBe(false);
    expect(rule({ x: 'a'.repeat(30) })).toBe(true);
  });

  it('accepts JavaScript spellings of escapes and named groups', () => {
    expect(engine.compile({ matches: [{ var: 'x' }, '^caf\\u00e9$'] })({ x: 'café' })).toBe(true);
    expect(engine.compile({ matches: [{ var: 'x' }, '^(?<site>SITE)-\\d+$'] })({ x: 'SITE-03' })).toBe(true);
  });

  it('refuses backreferences and lookaround at compile time, naming the rule and the construct', () => {
    const rules = [
      { id: 'repeated-letter', field: 'a', logic: { matches: [{ var: 'a' }, '(a)\\1'] }, message: 'm' },
      { id: 'not-followed', field: 'b', logic: { matches: [{ var: 'b' }, 'S(?!0)'] }, message: 'm' },
      { id: 'preceded', field: 'c', logic: { matches: [{ var: 'c' }, '(?<=S)0'] }, message: 'm' },
    ];
    let error: unknown;
    try {
      compileRules(rules);
    } catch (thrown) {
      error = thrown;
    }
    expect(ClinAgentError.isInstance(error) && error.code).toBe('RULE_COMPILE_FAILED');
    const message = (error as Error).message;
    expect(message).toMatch(/rules\[0\] \(repeated-letter\): logic\.matches: .*backreferences .* are not supported/);
    expect(message).toMatch(/rules\[1\] \(not-followed\): logic\.matches: .*lookahead and lookbehind .* are not supported/);
    expect(message).toMatch(/rules\[2\] \(preceded\): logic\.matches: .*lookahead and lookbehind/);
  });
});

function compileError(rules: unknown[]): ClinAgentError {
  try {
    compileRules(rules as Parameters<typeof compileRules>[0]);
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected compileRules to throw');
}

/** Issue 21: a 100 kB value tested against `(a|aa|aaa){999}!` from the data stalled the server for 41 s. */
describe('matches bounds on the work one rule may do', () => {
  it('refuses a literal pattern that compiles to over 1000 instructions, naming the rule and how to fix it', () => {
    const error = compileError([
      { id: 'repeat-999', field: 'a', logic: { matches: [{ var: 'a' }, '(a|aa|aaa){999}!'] }, message: 'm' },
      { id: 'repeat-110', field: 'b', logic: { matches: [{ var: 'b' }, '(a|aa|aaa){110}!'] }, message: 'm' }, // 993 instructions
    ]);
    expect(error.code).toBe('RULE_COMPILE_FAILED');
    expect(error.message).toContain(`rules[0] (repeat-999): logic.matches: pattern "(a|aa|aaa){999}!" compiles to 8994 instructions, over the ${MAX_PROGRAM_SIZE}-instruction limit`);
    expect(error.message).toContain('use smaller repetition counts (e.g. {1,99} rather than {999})');
    expect(error.message).not.toContain('rules[1]');
  });

  it('refuses the same pattern taken from the data when the rule runs, on every record alike', () => {
    const rule = engine.compile({ matches: [{ var: 'x' }, { var: 'pattern' }] });
    for (let i = 0; i < 2; i++) {
      expect(() => rule({ x: 'a'.repeat(20_000) + '!', pattern: '(a|aa|aaa){999}!' })).toThrow(/^matches: pattern "\(a\|aa\|aaa\)\{999\}!" compiles to 8994 instructions/);
    }
  });

  it('reports a value over 10 000 characters as an error, not as "no match"', () => {
    const rule = engine.compile({ matches: [{ var: 'x' }, '^a+$'] });
    expect(() => rule({ x: 'a'.repeat(100_000) })).toThrow(`matches: the value is 100000 characters, over the ${MAX_VALUE_LENGTH}-character limit for pattern tests; correct the value, or if values this long are expected, test a part of it with {"substr": [value, 0, ${MAX_VALUE_LENGTH}]}`);
    expect(rule({ x: 'a'.repeat(MAX_VALUE_LENGTH) })).toBe(true);
    expect(engine.compile({ matches: [{ substr: [{ var: 'x' }, 0, MAX_VALUE_LENGTH] }, '^a+$'] })({ x: 'a'.repeat(100_000) })).toBe(true);
    const error = compileError([{ id: 'long-literal', field: 'a', logic: { matches: ['a'.repeat(MAX_VALUE_LENGTH + 1), { var: 'a' }] }, message: 'm' }]);
    expect(error.message).toContain(`rules[0] (long-literal): logic.matches: the value is ${MAX_VALUE_LENGTH + 1} characters, over the ${MAX_VALUE_LENGTH}-character limit`);
  });

  it('refuses a pattern and value that together are more work than one rule may do, saying what to shorten', () => {
    // Each within its own limit: 894 instructions, 10 000 characters; together about 9 million steps.
    const rule = engine.compile({ matches: [{ var: 'x' }, '(a|aa|aaa){99}!'] });
    expect(() => rule({ x: 'a'.repeat(MAX_VALUE_LENGTH) })).toThrow(
      `matches: testing 10000 characters against a pattern of 894 instructions takes about 9029400 steps, over the ${MAX_MATCHING_STEPS_PER_RULE} one rule may take on one record; use a simpler pattern, or test a shorter part of the value with {"substr": [value, 0, n]}`,
    );
    expect(rule({ x: 'a'.repeat(400) + '!' })).toBe(true);
    // A field format on a value at the length limit fits easily.
    expect(engine.compile({ matches: [{ var: 'x' }, '^(?:[ab]*a[ab]{12}){3}$'] })({ x: 'ab'.repeat(MAX_VALUE_LENGTH / 2) })).toBe(false);
  });

  it('stops a rule that tests many patterns from the data once its budget is spent, and gives the next evaluation a fresh one', () => {
    const anyPattern = engine.compile({ some: [{ var: 'patterns' }, { matches: ['x', { var: '' }] }] });
    // About 91 000 steps each (902-907 instructions): five fit in one rule's 500 000, the sixth does not.
    const patterns = Array.from({ length: 6 }, (_, i) => `a{${900 + i}}`);
    expect(() => anyPattern({ patterns })).toThrow(/^matches: this rule has used up the pattern matching one rule may do on one record \(500000 steps/);
    expect(anyPattern({ patterns: patterns.slice(0, 5) })).toBe(false);
    expect(() => anyPattern({ patterns })).toThrow(/used up/); // the same answer with every pattern cached
  });

  it('compiles and tests nothing more once a rule has gone over its budget, even inside try', () => {
    const rule = engine.compile({ and: [{ try: [{ '!': { matches: [{ var: 'long' }, '(a|aa|aaa){99}!'] } }, true] }, { matches: [{ var: 'id' }, '^S\\d{3}$'] }] });
    expect(rule({ long: 'a!', id: 'S001' })).toBe(true);
    // The first test is over the budget: try turns its error into true, and the second test is refused.
    expect(() => rule({ long: 'a'.repeat(1_000) + '!', id: 'S001' })).toThrow(/used up the pattern matching one rule may do/);
    expect(rule({ long: 'a!', id: 'S001' })).toBe(true);
  });
});
