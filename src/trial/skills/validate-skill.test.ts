import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createToolRegistry } from '../../core/tools/registry.js';
import type { ProjectDictionary } from './dictionary-check.js';
import { readSkillSource } from './skill-source.js';
import { validateSkill } from './validate-skill.js';

const DICTIONARY: ProjectDictionary = {
  projectId: 'htn',
  fields: [
    { fieldName: 'age', fieldType: 'integer', choices: [] },
    { fieldName: 'weight', fieldType: 'number', choices: [] },
    { fieldName: 'visit_date', fieldType: 'date', choices: [] },
    { fieldName: 'gym', fieldType: 'checkbox', choices: [{ code: '1' }, { code: '2' }] },
  ],
  events: ['baseline_arm_1', 'week4_arm_1'],
};

function skill(rules: string): unknown {
  return parse(`
id: checks
name: Checks
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
${rules}
    on_pass: end_ok
    on_fail: end_flagged
`);
}

const validate = (raw: unknown, dictionaries: ProjectDictionary[] = [DICTIONARY], skipped: string[] = []) => validateSkill(raw, { tools: createToolRegistry(), dictionaries, skipped });

describe('skill validation against the dictionary', () => {
  it('names the rule of a misspelt field and suggests the dictionary name', () => {
    const result = validate(skill('      - { id: weight-max, field: weight, logic: { "<=": [{ var: wieght }, 200] }, message: "Weight above 200" }'));
    expect(result.valid).toBe(false);
    expect(result.problems).toEqual([
      { path: 'nodes.hard.rules[0].logic["<="][0].var', message: 'rule "weight-max" (node hard) reads unknown field "wieght"; did you mean "weight"?', suggestion: 'weight', word: 'wieght' },
    ]);
  });

  it('takes two swapped letters for one typo, so `spb` suggests `sbp` rather than another three-letter field', () => {
    const vitals: ProjectDictionary = { ...DICTIONARY, fields: [{ fieldName: 'dob', fieldType: 'date', choices: [] }, { fieldName: 'sbp', fieldType: 'integer', choices: [] }] };
    const result = validate(skill('      - { id: sbp-max, field: sbp, logic: { "<=": [{ var: spb }, 180] }, message: "SBP above 180" }'), [vitals]);
    expect(result.problems).toEqual([expect.objectContaining({ suggestion: 'sbp', word: 'spb' })]);
  });

  it('checks event.field paths: an unknown event suggests the project\'s event, an unknown field under a known event the field', () => {
    const result = validate(skill([
      '      - { id: w4, field: week4_arm_1.weight, logic: { "!": { missing: [week_4_arm_1.weight] } }, message: "Weight blank at week 4" }',
      '      - { id: w4-date, field: week4_arm_1.visit_date, logic: { "!": { missing: [week4_arm_1.visti_date] } }, message: "Date blank" }',
    ].join('\n')));
    expect(result.problems).toEqual([
      expect.objectContaining({ path: 'nodes.hard.rules[0].logic["!"].missing', message: expect.stringContaining('rule "w4" (node hard) reads unknown event "week_4_arm_1"'), suggestion: 'week4_arm_1', word: 'week_4_arm_1' }),
      expect.objectContaining({ path: 'nodes.hard.rules[1].logic["!"].missing', message: expect.stringContaining('unknown field "visti_date" of event "week4_arm_1"'), suggestion: 'visit_date', word: 'visti_date' }),
    ]);
  });

  it('reads a checkbox per choice (gym___1), refuses its bare name in logic, and accepts it as the field a query is on', () => {
    const ok = validate(skill('      - { id: gym, field: gym, logic: { "==": [{ var: gym___1 }, "1"] }, message: "Gym" }'));
    expect(ok).toEqual({ valid: true, problems: [], notes: [] });
    const bare = validate(skill('      - { id: gym, field: gym, logic: { "==": [{ var: gym }, "1"] }, message: "Gym" }'));
    expect(bare.problems).toEqual([expect.objectContaining({ message: expect.stringContaining('a checkbox field: its values are read per choice (gym___1, gym___2)'), suggestion: 'gym___1', word: 'gym' })]);
  });

  it('names each project in a skill for several, and notes a project without a dictionary', () => {
    const other: ProjectDictionary = { projectId: 'other', fields: [{ fieldName: 'age', fieldType: 'integer', choices: [] }], events: [] };
    const result = validate(skill('      - { id: w, field: weight, logic: { "<=": [{ var: weight }, 200] }, message: "Weight" }'), [DICTIONARY, other], ['empty']);
    expect(result.problems.map((p) => p.message)).toEqual([
      'rule "w" (node hard) raises its query on unknown field "weight" in project "other"',
      'rule "w" (node hard) reads unknown field "weight" in project "other"',
    ]);
    expect(result.notes).toEqual([expect.stringContaining('project "empty" has no data dictionary yet')]);
  });

  it('reports shape, flowchart and operator problems at their paths, and no suggestion when nothing is close', () => {
    const result = validate(skill('      - { id: x, field: age, logic: { between: [{ var: age }, 1, 2] }, message: "x" }'));
    expect(result.problems).toEqual([expect.objectContaining({ path: 'nodes.hard.rules[0].logic', message: 'rule "x" (node hard): unknown operator "between"' })]);
    const far = validate(skill('      - { id: y, field: age, logic: { "<": [{ var: zzzzzzzzqqq }, 1] }, message: "y" }'));
    expect(far.problems[0]).toMatchObject({ word: 'zzzzzzzzqqq' });
    expect(far.problems[0]!.suggestion).toBeUndefined();
    const shape = validate({ id: 'Bad Id', name: 'x', start_node: 'nowhere', nodes: {} });
    expect(shape.problems.map((p) => p.path)).toEqual(['id']);
  });

  it('reads YAML that cannot be parsed as problems by line', () => {
    const result = readSkillSource({ yaml: 'id: a\nnodes: [unclosed\n' });
    expect(result.problems?.[0]?.path).toMatch(/^line \d+, column \d+$/);
  });
});
