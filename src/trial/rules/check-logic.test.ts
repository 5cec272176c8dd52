import { describe, expect, it } from 'vitest';
import { checkLogic } from './check-logic.js';
import { createRuleEngine } from './rule-engine.js';

const engine = createRuleEngine();
const fields = new Set(['visits', 'age', 'ae']);

describe('checkLogic', () => {
  it('does not check fields inside iterator bodies, where var names the item', () => {
    const logic = { all: [{ var: 'visits' }, { is_date: { var: 'date' } }] };
    expect(checkLogic(logic, engine, fields)).toEqual([]);
    expect(checkLogic({ all: [{ var: 'visitz' }, { is_date: { var: 'date' } }] }, engine, fields)).toEqual([
      { path: 'logic.all[0].var', kind: 'variable', message: 'unknown variable "visitz"' },
    ]);
  });

  it('still finds unknown operators inside iterator bodies', () => {
    expect(checkLogic({ some: [{ var: 'ae' }, { frobnicate: [] }] }, engine, fields)).toEqual([
      { path: 'logic.some[1]', kind: 'operator', message: 'unknown operator "frobnicate"' },
    ]);
  });

  it('leaves preserve arguments alone and flags other multi-key objects', () => {
    expect(checkLogic({ '==': [{ var: 'age' }, { preserve: { a: 1, b: 2 } }] }, engine, fields)).toEqual([]);
    expect(checkLogic({ '==': [{ var: 'age' }, { a: 1, b: 2 }] }, engine, fields)).toEqual([
      { path: 'logic["=="][1]', kind: 'operator', message: expect.stringMatching(/exactly one operator key, found 2 \(a, b\)/) },
    ]);
  });

  it('checks the first segment of dotted, defaulted and val paths and skips computed ones', () => {
    expect(checkLogic({ var: ['age.years', 0] }, engine, fields)).toEqual([]);
    expect(checkLogic({ val: ['ae', 'term'] }, engine, fields)).toEqual([]);
    expect(checkLogic({ var: { cat: ['a', 'ge'] } }, engine, fields)).toEqual([]);
    expect(checkLogic({ missing_some: [1, ['age', 'weight']] }, engine, fields)).toEqual([
      { path: 'logic.missing_some', kind: 'variable', message: 'unknown variable "weight"' },
    ]);
  });

  it('rejects operator names inherited from Object.prototype', () => {
    expect(checkLogic({ constructor: [] }, engine)).toEqual([{ path: 'logic', kind: 'operator', message: 'unknown operator "constructor"' }]);
  });

  it('checks no fields when none are known', () => {
    expect(checkLogic({ var: 'anything' }, engine)).toEqual([]);
  });
});
