import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { errorOf } from '../../../testing/error-of.js';
import { loadSkills } from '../../../trial/sop/load-skills.js';
import { skillFileSchema } from '../../../trial/sop/skill-schema.js';
import type { ProtocolContext } from '../context.js';
import { compileProtocolChecks } from './index.js';

const context: ProtocolContext = {
  pico: {
    eligibility: {
      inclusion: [
        { text: 'Aged 18 to 75 years', field: 'age', operator: 'between', value: [18, 75], unit: 'years' },
        { text: 'eGFR of at least 30', field: 'egfr', operator: '>=', value: 30, unit: 'mL/min/1.73m2' },
        { text: 'Able to give informed consent' },
      ],
      exclusion: [
        { text: 'Pregnant', field: 'pregnant', operator: '==', value: 'yes' },
        { text: 'Heart failure NYHA', field: 'nyha', operator: 'between', value: [3] },
        { text: 'Serum potassium', field: 'serum potassium', operator: '>', value: 5.5 },
      ],
    },
  },
  studyDesign: {
    visitDateField: 'visit_date',
    visits: [
      { name: 'Baseline', day: 0, event: 'v1_arm_1' },
      { name: 'Week 4', day: 28, windowBefore: 3, windowAfter: 3, event: 'v2_arm_1' },
      { name: 'Week 12', day: 84, windowBefore: 7, windowAfter: 14, event: 'v3_arm_1' },
      { name: 'Phone call', day: 42, windowBefore: 2 },
    ],
  },
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('compileProtocolChecks', () => {
  it('compiles checkable criteria and windows into rules and lists the rest with their reasons', () => {
    const compiled = compileProtocolChecks(context, { skillId: 'protocol-checks' });
    expect(compiled.rules.map((rule) => [rule.ruleId, rule.source])).toEqual([
      ['inclusion-1-age', 'inclusion'],
      ['inclusion-2-egfr', 'inclusion'],
      ['exclusion-1-pregnant', 'exclusion'],
      ['visit-window-1-v2_arm_1', 'visit_window'],
      ['visit-window-2-v3_arm_1', 'visit_window'],
    ]);
    expect(compiled.rules[2]).toMatchObject({ criterion: 'Pregnant', test: { field: 'pregnant', operator: '==', value: 1 } });
    expect(compiled.rules[3]).toMatchObject({ window: { dateField: 'v2_arm_1.visit_date', anchorField: 'v1_arm_1.visit_date', day: 28, before: 3, after: 3 } });

    const reasons = Object.fromEntries(compiled.skipped.map((item) => [item.text, item.reason]));
    expect(reasons['Able to give informed consent']).toBe(
      'no field named: the criterion is text only; name the dictionary variable to check it (field, operator and value)',
    );
    expect(reasons['Heart failure NYHA']).toBe('between needs [low, high], two numbers, got [3]');
    expect(reasons['Serum potassium']).toContain('"serum potassium" is not a valid variable name');
    expect(reasons['Baseline: day 0']).toContain('the baseline visit (day 0)');
    expect(reasons['Phone call: day 42 -2/+2']).toContain('no event: name the trial\'s event');
    expect(compiled.skipped).toHaveLength(5);
  });

  it('writes rules that fire on the right side: inclusion is the criterion, exclusion its negation', () => {
    const rules = compileProtocolChecks(context, { skillId: 'protocol-checks' }).skill.nodes.protocol_checks;
    expect(rules?.type).toBe('hard_rule');
    const byId = Object.fromEntries((rules?.type === 'hard_rule' ? rules.rules : []).map((rule) => [rule.id, rule]));
    expect(byId['inclusion-2-egfr']).toMatchObject({
      field: 'egfr',
      severity: 'error',
      logic: { and: [{ '!': { missing: ['egfr'] } }, { '>=': [{ var: 'egfr' }, 30] }] },
    });
    expect(byId['exclusion-1-pregnant']!.logic).toEqual({ or: [{ missing: ['pregnant'] }, { '!': { '==': [{ var: 'pregnant' }, 1] } }] });
    expect(byId['visit-window-2-v3_arm_1']).toMatchObject({
      field: 'v3_arm_1.visit_date',
      severity: 'warning',
      logic: {
        or: [
          { missing: ['v3_arm_1.visit_date', 'v1_arm_1.visit_date'] },
          { in_window: [{ var: 'v3_arm_1.visit_date' }, { var: 'v1_arm_1.visit_date' }, 84, 7, 14] },
        ],
      },
    });
    expect(byId['inclusion-1-age']!.message).toBe('Inclusion criterion not met or not recorded: "Aged 18 to 75 years" needs age between 18 and 75 years');
  });

  it('produces a skill the skill schema accepts and YAML the start-up loader loads and compiles', () => {
    const compiled = compileProtocolChecks(context, { skillId: 'protocol-checks', name: 'My protocol checks', projects: ['demo-htn-01'] });
    expect(skillFileSchema.safeParse(compiled.skill).success).toBe(true);
    expect(parseYaml(compiled.yaml)).toEqual(compiled.skill);
    expect(compiled.yaml).toContain('# Not checked');
    expect(compiled.yaml).toContain('"Able to give informed consent": no field named');

    const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-protocol-checks-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'protocol-checks.yaml'), compiled.yaml);
    const [skill] = loadSkills(dir);
    expect(skill).toMatchObject({ id: 'protocol-checks', name: 'My protocol checks', projects: ['demo-htn-01'], startNode: 'protocol_checks' });
    expect(skill!.compiled.protocol_checks!.rules.map((rule) => rule.id)).toEqual(compiled.rules.map((rule) => rule.ruleId));
    const violations = skill!.compiled.protocol_checks!.run({ age: 80, egfr: 45, pregnant: '1', v1_arm_1: { visit_date: '2024-01-01' }, v2_arm_1: { visit_date: '2024-02-15' } });
    expect(violations.map((violation) => violation.ruleId)).toEqual(['inclusion-1-age', 'exclusion-1-pregnant', 'visit-window-1-v2_arm_1']);
  });

  it('counts from the top-level visit date when no day-0 visit names its event, and reads a one-sided window as symmetric', () => {
    const compiled = compileProtocolChecks(
      { studyDesign: { visitDateField: 'visit_date', visits: [{ name: 'V2', day: 14, windowAfter: 2, event: 'v2_arm_1' }] } },
      { skillId: 'windows' },
    );
    expect(compiled.rules).toEqual([
      { ruleId: 'visit-window-1-v2_arm_1', source: 'visit_window', criterion: 'V2: day 14 -2/+2', window: { dateField: 'v2_arm_1.visit_date', anchorField: 'visit_date', day: 14, before: 2, after: 2 } },
    ]);
  });

  it('skips, rather than crashes on, values that do not fit their operator', () => {
    const criteria = [
      { text: 'a', field: 'age', operator: '>=' as const, value: 'adult' },
      { text: 'b', field: 'age', operator: 'between' as const, value: [75, 18] },
      { text: 'c', field: 'sex', operator: '==' as const, value: [1, 2] },
      { text: 'd', field: 'ecog', operator: 'in' as const, value: 1 },
      { text: 'e', field: 'ecog', operator: '=>' as never, value: 1 },
      { text: 'f', field: 'ecog', operator: '<' as const },
      { text: 'g', field: 'v1.age', operator: '<' as const, value: 3 },
      { text: 'h', field: 'ecog', operator: 'in' as const, value: ['0', 1] },
    ];
    const compiled = compileProtocolChecks({ pico: { eligibility: { inclusion: criteria } } }, { skillId: 'x' });
    expect(compiled.skipped.map((item) => [item.text, item.reason])).toEqual([
      ['a', '>= needs a number to compare age with, got "adult"'],
      ['b', 'between [75, 18]: the low bound is above the high bound; swap them'],
      ['c', '== compares with one value, got the list [1,2]; use "in" for a list'],
      ['d', 'in needs a non-empty list of values, got 1'],
      ['e', 'operator "=>" is not one of >=, <=, >, <, ==, !=, between, in'],
      ['f', 'no value: say what ecog is compared with'],
      ['g', expect.stringContaining('"v1.age" is not a valid variable name')],
    ]);
    expect(compiled.rules).toEqual([{ ruleId: 'inclusion-8-ecog', source: 'inclusion', criterion: 'h', test: { field: 'ecog', operator: 'in', value: [0, 1] } }]);
  });

  it('skips every window when the visit date variable is not named', () => {
    const error = errorOf(() => compileProtocolChecks({ studyDesign: { visits: [{ name: 'V2', day: 28, windowBefore: 3, event: 'v2_arm_1' }] } }, { skillId: 'x' }));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toContain('Nothing in the protocol can be checked yet');
    expect(error.message).toContain('visit_window "V2: day 28 -3/+3": no visit date variable: set studyDesign.visitDateField');
  });

  it('refuses an empty protocol and a skill id the loader would refuse, saying what to do', () => {
    expect(errorOf(() => compileProtocolChecks({}, { skillId: 'x' })).message).toContain('add them (PICO and study design stages)');
    const error = errorOf(() => compileProtocolChecks(context, { skillId: 'Protocol Checks' }));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toContain('use 1-64 lowercase letters, digits, - or _');
  });
});
