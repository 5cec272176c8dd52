import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkLogic } from './check-logic.js';
import { createRuleEngine } from './rule-engine.js';

/**
 * The official JSON Logic suite (fixtures/README.md names its source), run through the engine ClinAgent uses,
 * clinical operators registered and compiled with `build` as compileRules does. Standard JSON Logic must
 * behave exactly as the specification; a failing case means the engine configuration is wrong.
 */
type Case = [rule: unknown, data: unknown, expected: unknown];
const suite = JSON.parse(readFileSync(new URL('./fixtures/jsonlogic-tests.json', import.meta.url), 'utf8')) as Array<string | Case>;
const cases = suite.filter((entry): entry is Case => typeof entry !== 'string');
const engine = createRuleEngine();

describe('official JSON Logic suite', () => {
  it('has the full suite', () => {
    expect(cases.length).toBe(280);
  });

  it.each(cases.map((c, i) => [i, JSON.stringify(c[0]), ...c] as const))('case %i: %s', (_i, _text, rule, data, expected) => {
    expect(engine.compile(rule)(data)).toEqual(expected);
    // The static checks compileRules runs must accept every standard rule.
    expect(checkLogic(rule, engine)).toEqual([]);
  });
});
