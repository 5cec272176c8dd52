import { describe, expect, it } from 'vitest';
import { compileRules } from './compile-rules.js';

describe('CompiledRules.run', () => {
  it('returns a violation with rule id, field, message, severity and the field value for each failed rule', () => {
    const compiled = compileRules([
      { id: 'age-range', field: 'age', logic: { and: [{ '>=': [{ var: 'age' }, 18] }, { '<=': [{ var: 'age' }, 75] }] }, message: 'Age must be 18-75', severity: 'warning' },
      { field: 'informed_consent_date', logic: { '!!': { var: 'informed_consent_date' } }, message: 'Consent date is required' },
      { field: 'ecog', logic: { in: [{ var: 'ecog' }, [0, 1, 2]] }, message: 'ECOG must be 0-2', severity: 'info' },
    ]);
    expect(compiled.run({ age: 80, ecog: 1 })).toEqual([
      { ruleId: 'age-range', field: 'age', message: 'Age must be 18-75', severity: 'warning', value: 80 },
      { ruleId: 'informed_consent_date#1', field: 'informed_consent_date', message: 'Consent date is required', severity: 'error', value: null },
    ]);
    expect(compiled.run({ age: 40, informed_consent_date: '2025-01-01', ecog: 2 })).toEqual([]);
  });

  it('turns a rule that throws into an error violation naming the rule, and still runs the rules after it', () => {
    const compiled = compileRules([
      { id: 'consent-first', field: 'consent_date', logic: { '>=': [{ date_diff_days: [{ var: 'consent_date' }, { var: 'enrollment_date' }] }, 0] }, message: 'Consent after enrolment', severity: 'warning' },
      { id: 'site-pattern', field: 'subject_id', logic: { matches: [{ var: 'subject_id' }, { var: 'site_pattern' }] }, message: 'Bad subject id' },
      { id: 'age', field: 'age', logic: { '<=': [18, { var: 'age' }, 75] }, message: 'Age must be 18-75' },
    ]);
    const violations = compiled.run({ consent_date: null, enrollment_date: '2025-06-18', subject_id: 'S004', site_pattern: '([', age: 90 });
    expect(violations).toEqual([
      { ruleId: 'consent-first', field: 'consent_date', severity: 'error', value: null, message: expect.stringMatching(/^Rule "consent-first" could not be evaluated: date_diff_days: argument 1 is missing/) },
      { ruleId: 'site-pattern', field: 'subject_id', severity: 'error', value: 'S004', message: expect.stringMatching(/^Rule "site-pattern" could not be evaluated: matches: pattern "\(\[" is not a valid/) },
      { ruleId: 'age', field: 'age', message: 'Age must be 18-75', severity: 'error', value: 90 },
    ]);
  });

  it('describes errors json-logic-engine throws as plain objects', () => {
    const compiled = compileRules([{ field: 'x', logic: { max: [{ var: 'x' }] }, message: 'm' }, { field: 'y', logic: { throw: 'Custom' }, message: 'm' }]);
    expect(compiled.run({ x: 'text' }).map((v) => v.message)).toEqual(['Rule "x#0" could not be evaluated: Invalid Arguments', 'Rule "y#1" could not be evaluated: Custom']);
  });

  it('applies JSON Logic truthiness: empty array fails, "0" and objects pass', () => {
    const rule = (logic: unknown) => compileRules([{ field: 'v', logic, message: 'm' }]);
    expect(rule({ var: 'v' }).run({ v: [] })).toHaveLength(1);
    expect(rule({ var: 'v' }).run({ v: '0' })).toHaveLength(0);
    expect(rule({ var: 'v' }).run({ v: {} })).toHaveLength(0);
    expect(rule({ var: 'v' }).run({ v: 0 })).toHaveLength(1);
  });

  it('reports only the record\'s own value, not inherited properties', () => {
    const compiled = compileRules([{ field: 'constructor', logic: false, message: 'm' }]);
    expect(compiled.run({})[0]!.value).toBeNull();
  });
});

/** Issue 21: QC shares the event loop with the HTTP server; rules on hostile data must let it turn. */
describe('CompiledRules.runInSlices', () => {
  // Each rule about as slow as the bounds allow: 48 instructions on 10 000 characters whose DFA explodes.
  const slowRules = Array.from({ length: 8 }, (_, i) => ({ id: `format-${i}`, field: `code${i}`, logic: { matches: [{ var: `code${i}` }, `(?:[ab]*a[ab]{${12 - (i % 3)}}){3}$`] }, message: `Code ${i} has the wrong format` }));
  const hostile = Object.fromEntries(slowRules.map((_, i) => [`code${i}`, `${randomLetters(9_999, i)}!`]));

  it('gives the same violations as run, in the same order', async () => {
    const compiled = compileRules([...slowRules, { id: 'bad', field: 'p', logic: { matches: [{ var: 'p' }, { var: 'p' }] }, message: 'm' }]);
    const data = { ...hostile, p: '(a|aa|aaa){999}!' };
    const sliced = await compiled.runInSlices(data);
    expect(sliced).toEqual(compiled.run(data));
    expect(sliced.map((v) => v.ruleId)).toEqual([...slowRules.map((r) => r.id), 'bad']);
    expect(sliced.at(-1)!.message).toMatch(/^Rule "bad" could not be evaluated: matches: pattern .* compiles to 8994 instructions/);
  });

  it('lets the event loop turn while it works through slow rules', async () => {
    const compiled = compileRules(slowRules);
    let loopTurns = 0;
    let evaluating = true;
    const tick = () => {
      if (!evaluating) return;
      loopTurns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await compiled.runInSlices(hostile);
    evaluating = false;
    // run() would have held the loop for all eight rules: the ticker could not have run at all meanwhile.
    expect(loopTurns).toBeGreaterThan(1);
  });
});

/** Deterministic a/b text, a different one for each seed. */
function randomLetters(length: number, seed: number): string {
  let state = (seed + 1) * 2654435761;
  let text = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    text += state & 0x10000 ? 'a' : 'b';
  }
  return text;
}
