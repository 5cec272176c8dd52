import { describe, expect, it } from 'vitest';
import { compileRules } from '../../../trial/rules/index.js';
import type { ProtocolContext } from '../context.js';
import { compileProtocolChecks, generateTestRecords, verifyProtocolChecks } from './index.js';

// The engine the skill loader compiles every hard-rule node with; the lead passes the same function at start-up.
const engine = { compileRules };

const context: ProtocolContext = {
  pico: {
    eligibility: {
      inclusion: [
        { text: 'Aged 18 to 75 years', field: 'age', operator: 'between', value: [18, 75], unit: 'years' },
        { text: 'eGFR >= 30', field: 'egfr', operator: '>=', value: 30 },
        { text: 'HbA1c below 8.5%', field: 'hba1c', operator: '<', value: 8.5 },
        { text: 'ECOG 0 or 1', field: 'ecog', operator: 'in', value: [0, 1] },
      ],
      exclusion: [
        { text: 'Pregnant', field: 'pregnant', operator: '==', value: 'yes' },
        { text: 'On dialysis', field: 'dialysis', operator: '==', value: true },
        { text: 'Potassium above 5.5', field: 'k', operator: '>', value: 5.5 },
        { text: 'Not of Han ethnicity', field: 'ethnicity', operator: '!=', value: 'han' },
      ],
    },
  },
  studyDesign: {
    visitDateField: 'visit_date',
    visits: [
      { name: 'Baseline', day: 0, event: 'v1_arm_1' },
      { name: 'Week 4', day: 28, windowBefore: 3, windowAfter: 3, event: 'v2_arm_1' },
      { name: 'Week 12', day: 84, windowBefore: 7, windowAfter: 14, event: 'v3_arm_1' },
    ],
  },
};

const compiled = compileProtocolChecks(context, { skillId: 'protocol-checks' });

/** `label -> expected` of one rule's records, to read the boundaries at a glance. */
function expectations(ruleId: string): Record<string, string> {
  return Object.fromEntries(generateTestRecords(compiled).filter((r) => r.ruleId === ruleId).map((r) => [JSON.stringify(r.data), r.expected]));
}

describe('generateTestRecords', () => {
  it('probes between [18, 75] with 17 and 76 (fire) and 18 and 75 (pass), and a blank age fires', () => {
    expect(expectations('inclusion-1-age')).toEqual({
      '{"age":18}': 'passes',
      '{"age":75}': 'passes',
      '{"age":17}': 'fires',
      '{"age":76}': 'fires',
      '{"age":null}': 'fires',
    });
  });

  it('probes >= 30 with 29 and 30, < 8.5 with 8.4 and 8.5, and > 5.5 for an exclusion the other way round', () => {
    expect(expectations('inclusion-2-egfr')).toMatchObject({ '{"egfr":29}': 'fires', '{"egfr":30}': 'passes' });
    expect(expectations('inclusion-3-hba1c')).toMatchObject({ '{"hba1c":8.4}': 'passes', '{"hba1c":8.5}': 'fires' });
    expect(expectations('exclusion-3-k')).toEqual({ '{"k":5.6}': 'fires', '{"k":5.5}': 'passes', '{"k":null}': 'passes' });
  });

  it('probes pregnant == yes with the code 1, as number and as the text REDCap stores', () => {
    expect(expectations('exclusion-1-pregnant')).toEqual({
      '{"pregnant":1}': 'fires',
      '{"pregnant":"1"}': 'fires',
      '{"pregnant":0}': 'passes',
      '{"pregnant":2}': 'passes',
      '{"pregnant":null}': 'passes',
    });
  });

  it('probes a window one day outside each edge (fire) and on each edge (pass)', () => {
    const dates = (ruleId: string) =>
      Object.fromEntries(
        generateTestRecords(compiled)
          .filter((r) => r.ruleId === ruleId)
          .map((r) => [`${(r.data.v1_arm_1 as { visit_date: string }).visit_date} -> ${String((r.data.v3_arm_1 as { visit_date: string | null }).visit_date)}`, r.expected]),
      );
    // Baseline 2024-02-20 (a leap year): day 84 is 2024-05-14; the window is days 77..98.
    expect(dates('visit-window-2-v3_arm_1')).toEqual({
      '2024-02-20 -> 2024-05-14': 'passes',
      '2024-02-20 -> 2024-05-07': 'passes',
      '2024-02-20 -> 2024-05-28': 'passes',
      '2024-02-20 -> 2024-05-06': 'fires',
      '2024-02-20 -> 2024-05-29': 'fires',
      '2024-02-20 -> null': 'passes',
    });
  });

  it('gives every rule at least one record that must fire it and one that must not', () => {
    const records = generateTestRecords(compiled);
    for (const rule of compiled.rules) {
      const expected = new Set(records.filter((r) => r.ruleId === rule.ruleId).map((r) => r.expected));
      expect([rule.ruleId, [...expected].sort()]).toEqual([rule.ruleId, ['fires', 'passes']]);
    }
  });
});

describe('verifyProtocolChecks on the real rule engine', () => {
  it('passes every generated record for inclusion, exclusion and visit-window rules', () => {
    const report = verifyProtocolChecks(compiled, engine);
    expect(report.results.filter((result) => !result.ok)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(new Set(report.results.map((result) => result.ruleId))).toEqual(new Set(compiled.rules.map((rule) => rule.ruleId)));
    expect(report.results).toContainEqual({
      ruleId: 'inclusion-1-age',
      record: 'age = 17 (just below the lower bound: does not meet the criterion)',
      expected: 'fires',
      actual: 'fires',
      ok: true,
      violation: 'Inclusion criterion not met or not recorded: "Aged 18 to 75 years" needs age between 18 and 75 years',
    });
  });

  it('fails, naming the record, when the YAML says > where the protocol says >= (an off-by-one at the bound)', () => {
    const offByOne = { ...compiled, yaml: compiled.yaml.replace('{ ">=": [ { var: egfr }, 30 ] }', '{ ">": [ { var: egfr }, 30 ] }') };
    expect(offByOne.yaml).not.toBe(compiled.yaml);
    const report = verifyProtocolChecks(offByOne, engine);
    expect(report.passed).toBe(false);
    expect(report.results.filter((result) => !result.ok)).toEqual([
      expect.objectContaining({ ruleId: 'inclusion-2-egfr', record: 'egfr = 30 (on the bound: meets the criterion)', expected: 'passes', actual: 'fires' }),
    ]);
  });

  it('counts an evaluation error as firing, so a rule that cannot run never passes silently', () => {
    const broken = { ...compiled, yaml: compiled.yaml.replace('{ var: v1_arm_1.visit_date }, 84', '{ var: v1_arm_1.visit_date }, { var: v3_arm_1.visit_date }') };
    expect(broken.yaml).not.toBe(compiled.yaml);
    const failures = verifyProtocolChecks(broken, engine).results.filter((result) => !result.ok);
    expect(failures.map((result) => [result.ruleId, result.record, result.actual])).toEqual([
      ['visit-window-2-v3_arm_1', 'on the target day 84', 'fires'],
      ['visit-window-2-v3_arm_1', "on the window's first day 77", 'fires'],
      ['visit-window-2-v3_arm_1', "on the window's last day 98", 'fires'],
    ]);
    expect(failures[0]!.violation).toContain('could not be evaluated');
  });

  it('throws the engine\'s compile error for a rule set it refuses', () => {
    const broken = { ...compiled, yaml: compiled.yaml.replace('{ var: v1_arm_1.visit_date }, 84', '{ var: v1_arm_1.visit_date }, "84"') };
    expect(() => verifyProtocolChecks(broken, engine)).toThrow(/visit-window-2-v3_arm_1.*argument 3 "84" must be a number of days/);
  });
});
