import { describe, expect, it } from 'vitest';
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
});
