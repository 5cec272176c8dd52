import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { compileRules } from './compile-rules.js';
import { MAX_PATTERN_LENGTH } from './matches-operator.js';
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
