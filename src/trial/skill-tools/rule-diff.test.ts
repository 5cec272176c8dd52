import { describe, expect, it } from 'vitest';
import { buildSkillDefinition, type Skill } from '../sop/load-skills.js';
import type { TrialField } from '../store/types.js';
import { rulesAffectedByDictionary } from './dictionary-impact.js';
import { diffSkillRules } from './rule-diff.js';

const rule = (id: string, field: string, logic: unknown, extra: Record<string, unknown> = {}) => ({ id, field, logic, message: `${id} fired`, ...extra });

function skill(rules: unknown[], soft?: Record<string, unknown>): Skill {
  const nodes: Record<string, unknown> = { hard: { type: 'hard_rule', rules, on_pass: soft ? 'judge' : 'end_ok', on_fail: 'end_flagged' } };
  if (soft) nodes.judge = { type: 'soft_instruction', instruction: 'Plausible?', on_pass: 'end_ok', on_fail: 'end_flagged', ...soft };
  const built = buildSkillDefinition({ id: 'checks', name: 'Checks', start_node: 'hard', nodes }, 'test');
  if (!built.definition) throw new Error(built.problems.join('\n'));
  return built.definition;
}

const field = (fieldName: string, fieldType: TrialField['fieldType'], choices: string[] = []): TrialField => ({
  fieldName, formName: 'f', fieldType, label: fieldName, choices: choices.map((code) => ({ code, label: `label ${code}` })), validationMin: null, validationMax: null, required: false,
});

describe('diffSkillRules', () => {
  const age = rule('age', 'age', { '>=': [{ var: 'age' }, 18] });
  const sbp = rule('sbp', 'v2_arm_1.sbp', { '<=': [{ var: 'v2_arm_1.sbp' }, 180] });

  it('names added, removed and changed rules with what changed; key order in logic is not a change', () => {
    const before = skill([age, sbp, rule('gone', 'sex', { '!': { missing: ['sex'] } })], { instruction: 'Plausible?' });
    const after = skill([{ ...age, logic: { '>=': [{ var: 'age' }, 18] } }, { ...sbp, message: 'SBP too high', severity: 'warning' }, rule('new', 'weight', { '<': [{ var: 'weight' }, 200] })], { instruction: 'Plausible for this age?' });
    expect(diffSkillRules(before, after)).toEqual({
      added: [{ ruleId: 'new', node: 'hard', kind: 'hard', field: 'weight' }],
      removed: [{ ruleId: 'gone', node: 'hard', kind: 'hard', field: 'sex' }],
      changed: [
        { ruleId: 'sbp', node: 'hard', kind: 'hard', field: 'v2_arm_1.sbp', changes: ['message', 'severity'] },
        { ruleId: 'judge', node: 'judge', kind: 'soft', field: '(record)', changes: ['instruction'] },
      ],
      unchanged: 1,
    });
  });

  it('counts a rule whose severity is written out as its default as unchanged, and everything as added without a current version', () => {
    expect(diffSkillRules(skill([age]), skill([{ ...age, severity: 'error' }]))).toMatchObject({ changed: [], unchanged: 1 });
    expect(diffSkillRules(undefined, skill([age, sbp])).added.map((r) => r.ruleId)).toEqual(['age', 'sbp']);
  });
});

describe('rulesAffectedByDictionary', () => {
  const stored = [field('age', 'text'), field('sbp', 'text'), field('sex', 'radio', ['1', '2']), field('symptoms', 'checkbox', ['1', '2']), field('notes', 'notes')];
  const checks = skill([
    rule('adult', 'age', { '>=': [{ var: 'age' }, 18] }),
    rule('sbp', 'v2_arm_1.sbp', { '<=': [{ var: 'v2_arm_1.sbp' }, 180] }),
    rule('female-headache', 'symptoms___1', { or: [{ '!=': [{ var: 'sex' }, '2'] }, { '==': [{ var: 'symptoms___1' }, '0'] }] }),
  ]);

  it('lists each rule reading a removed field, a field of another type, or one with other choice codes', () => {
    const next = [field('age', 'text'), field('sbp', 'integer'), field('sex', 'radio', ['1', '2', '3']), field('notes', 'notes')];
    expect(rulesAffectedByDictionary([checks], stored, next)).toEqual([
      { skillId: 'checks', node: 'hard', ruleId: 'sbp', field: 'sbp', change: 'type_changed' },
      { skillId: 'checks', node: 'hard', ruleId: 'female-headache', field: 'symptoms', change: 'field_removed' },
      { skillId: 'checks', node: 'hard', ruleId: 'female-headache', field: 'sex', change: 'choices_changed' },
    ]);
  });

  it('lists nothing when only labels change, or when nothing was stored before', () => {
    const relabelled = stored.map((f) => ({ ...f, label: `${f.label} (new)`, choices: f.choices.map((c) => ({ ...c, label: 'other' })) }));
    expect(rulesAffectedByDictionary([checks], stored, relabelled)).toEqual([]);
    expect(rulesAffectedByDictionary([checks], [], [field('age', 'integer')])).toEqual([]);
  });
});
