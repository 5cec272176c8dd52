import { describe, expect, it, vi } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { compileRules } from './compile-rules.js';
import { createRuleEngine } from './rule-engine.js';
import type { HardRule } from './types.js';

function compileError(rules: unknown[], options?: Parameters<typeof compileRules>[1]): ClinAgentError {
  try {
    compileRules(rules as HardRule[], options);
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected compileRules to throw');
}

describe('compileRules', () => {
  it('lists every rule with an unknown operator at once, with its path and the valid operators', () => {
    const error = compileError([
      { id: 'age-range', field: 'age', logic: { and: [{ '>=': [{ var: 'age' }, 18] }, { between: [{ var: 'age' }, 18, 75] }] }, message: 'age 18-75' },
      { field: 'sbp', logic: { '<': [{ var: 'sbp' }, 200] }, message: 'fine' },
      { field: 'icf', logic: { '!!': { date_less: [{ var: 'icf' }, { var: 'enrolment' }] } }, message: 'consent first' },
    ]);
    expect(error.code).toBe('RULE_COMPILE_FAILED');
    expect(error.status).toBe(422);
    expect(error.message).toContain('2 of 3 hard rules cannot be compiled');
    expect(error.message).toContain('rules[0] (age-range): logic.and[1]: unknown operator "between"');
    expect(error.message).toContain('rules[2] (icf#2): logic["!!"]: unknown operator "date_less"');
    expect(error.message).toMatch(/Valid operators: .*date_before.*in_window.*matches/);
    expect(error.details.problems).toEqual([
      { index: 0, ruleId: 'age-range', path: 'logic.and[1]', message: 'unknown operator "between"' },
      { index: 2, ruleId: 'icf#2', path: 'logic["!!"]', message: 'unknown operator "date_less"' },
    ]);
    expect(error.details.validOperators).toContain('date_diff_days');
  });

  it('rejects variables outside knownFields, listing the valid variables', () => {
    const error = compileError(
      [
        { field: 'age', logic: { '<=': [18, { var: 'agee' }, 75] }, message: 'age 18-75' },
        { field: 'visit2_date', logic: { in_window: [{ var: 'visit2_date' }, { var: 'enrolment_date' }, 28, 3] }, message: 'V2 window' },
        { field: 'weight', logic: { '>': [{ var: 'weight.kg' }, 30] }, message: 'weight' },
        { field: 'bmi', logic: { missing: ['height'] }, message: 'height missing' },
      ],
      { knownFields: ['age', 'visit2_date', 'enrollment_date', 'weight'] },
    );
    expect(error.code).toBe('RULE_COMPILE_FAILED');
    expect(error.message).toContain('rules[0] (age#0): logic["<="][1].var: unknown variable "agee"');
    expect(error.message).toContain('rules[1] (visit2_date#1): logic.in_window[1].var: unknown variable "enrolment_date"');
    expect(error.message).toContain('rules[3] (bmi#3): logic.missing: unknown variable "height"');
    expect(error.message).toContain('rules[3] (bmi#3): field: unknown field "bmi"');
    expect(error.message).not.toContain('rules[2]'); // weight.kg starts with a known field
    expect(error.message).toContain('Valid variables: age, enrollment_date, visit2_date, weight.');
    expect(error.details.validVariables).toEqual(['age', 'enrollment_date', 'visit2_date', 'weight']);
  });

  it('rejects literal arguments of clinical operators that could never work', () => {
    const error = compileError([
      { field: 'a', logic: { matches: [{ var: 'a' }, '(unclosed'] }, message: 'm' },
      { field: 'b', logic: { matches: [{ var: 'b' }, 'x'.repeat(201)] }, message: 'm' },
      { field: 'c', logic: { date_before: [{ var: 'c' }, '2024-02-30'] }, message: 'm' },
      { field: 'd', logic: { in_window: [{ var: 'd' }, { var: 'e' }, 28] }, message: 'm' },
      { field: 'e', logic: { matches: [{ var: 'e' }, '^a', 'g'] }, message: 'm' },
    ]);
    expect(error.details.problems).toEqual([
      expect.objectContaining({ index: 0, path: 'logic.matches', message: expect.stringMatching(/not a valid regular expression/) }),
      expect.objectContaining({ index: 1, path: 'logic.matches', message: expect.stringMatching(/over the 200-character limit/) }),
      expect.objectContaining({ index: 2, path: 'logic.date_before', message: expect.stringMatching(/argument 2 "2024-02-30" is not an ISO date/) }),
      expect.objectContaining({ index: 3, path: 'logic.in_window', message: expect.stringMatching(/expects 4 to 5 arguments, got 3/) }),
      expect.objectContaining({ index: 4, path: 'logic.matches', message: expect.stringMatching(/flags "g" may only combine/) }),
    ]);
  });

  it('reports malformed rules as VALIDATION_FAILED together with any logic problems', () => {
    const error = compileError([
      { field: '', logic: true, message: 'x' },
      { field: 'a', logic: { nope: 1 }, message: '', severity: 'fatal' },
      { field: 'b', message: 'no logic' },
      { field: 'c', logic: true, message: 'typo', serverity: 'info' },
      'not a rule',
    ]);
    expect(error.code).toBe('VALIDATION_FAILED');
    const lines = (error.details.problems as Array<{ index: number; path: string; message: string }>).map((p) => `${p.index} ${p.path}: ${p.message}`);
    expect(lines).toEqual([
      '0 field: must name the record field the rule checks',
      '1 message: must tell the site what to fix',
      '1 severity: must be one of error, warning, info',
      '1 logic: unknown operator "nope"',
      '2 logic: is required: a JSON Logic expression',
      expect.stringMatching(/^3 \(rule\): .*serverity/),
      expect.stringMatching(/^4 \(rule\): /),
    ]);
  });

  it('rejects duplicate rule ids, including a clash with a generated id', () => {
    const error = compileError([
      { id: 'age#1', field: 'age', logic: true, message: 'a' },
      { field: 'age', logic: true, message: 'b' },
    ]);
    expect(error.message).toContain('rules[1] (age#1): id: duplicate rule id "age#1" (also rules[0])');
  });

  it('compiles each rule once and reuses it for every record', () => {
    const engine = createRuleEngine();
    const build = vi.spyOn(engine.logic, 'build');
    const compiled = compileRules(
      [
        { id: 'age', field: 'age', logic: { '<=': [18, { var: 'age' }, 75] }, message: 'age 18-75' },
        { id: 'v2', field: 'visit2_date', logic: { in_window: [{ var: 'visit2_date' }, { var: 'enrollment_date' }, 28, 3] }, message: 'V2 out of window', severity: 'warning' },
      ],
      { engine },
    );
    expect(build).toHaveBeenCalledTimes(2);
    let violations = 0;
    for (let i = 0; i < 1000; i++) {
      const age = 10 + (i % 80); // 18..75 passes: 58 of every 80
      const day = 20 + (i % 16); // 25..31 passes: 7 of every 16
      const visit2 = new Date(Date.UTC(2025, 0, 1 + day)).toISOString().slice(0, 10);
      const found = compiled.run({ age, enrollment_date: '2025-01-01', visit2_date: visit2 });
      expect(found.map((v) => v.ruleId)).toEqual([...(age < 18 || age > 75 ? ['age'] : []), ...(day < 25 || day > 31 ? ['v2'] : [])]);
      violations += found.length;
    }
    expect(violations).toBeGreaterThan(0);
    expect(build).toHaveBeenCalledTimes(2);
  });

  it('exposes the rules with their ids and keeps them frozen', () => {
    const compiled = compileRules([{ field: 'age', logic: true, message: 'm' }, { id: 'x', field: 'sex', logic: true, message: 'm', severity: 'info' }]);
    expect(compiled.rules.map((r) => r.id)).toEqual(['age#0', 'x']);
    expect(Object.isFrozen(compiled.rules)).toBe(true);
    expect(Object.isFrozen(compiled.rules[0])).toBe(true);
  });
});
