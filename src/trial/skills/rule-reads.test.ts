import { describe, expect, it } from 'vitest';
import { logicReads, ruleContents, skillReads } from './rule-reads.js';

const context = { isEvent: (name: string) => name === 'v1_arm_1' || name === 'v2_arm_1' };
const reads = (logic: unknown) => logicReads(logic, context).map((read) => `${read.kind}:${read.segments.join('.')}`);

describe('what a rule reads (for who may write it: identifier-rule-access.ts)', () => {
  it('names each field a var, val, exists, missing or missing_some reads, event-qualified ones by segment', () => {
    expect(reads({ and: [{ var: 'phone' }, { var: ['v2_arm_1.sbp', 0] }, { val: ['v1_arm_1', 'dob'] }, { exists: 'age' }, { missing: ['a', 'b'] }, { missing_some: [1, ['c']] }] })).toEqual([
      'field:phone', 'field:v2_arm_1.sbp', 'field:v1_arm_1.dob', 'field:age', 'field:a', 'field:b', 'field:c',
    ]);
  });

  it('counts a computed name, the whole record and a whole event as reading everything', () => {
    expect(reads({ var: { cat: ['ph', 'one'] } })).toEqual(['computed:']);
    expect(reads({ val: [{ var: 'which' }] })).toEqual(['computed:', 'field:which']);
    expect(reads({ missing: { var: 'names' } })).toEqual(['computed:', 'field:names']);
    expect(reads({ var: '' })).toEqual(['whole:']);
    expect(reads({ var: [] })).toEqual(['whole:']);
    expect(reads({ keys: [{ var: 'v1_arm_1' }] })).toEqual(['whole:v1_arm_1']);
  });

  it('counts whether a visit was entered (missing, exists) as no read of what it holds; a blank identifier still counts', () => {
    expect(reads({ and: [{ missing: ['v2_arm_1'] }, { exists: 'v1_arm_1' }, { missing_some: [1, ['v2_arm_1']] }] })).toEqual(['field:v2_arm_1', 'field:v1_arm_1', 'field:v2_arm_1']);
    expect(reads({ missing: ['v1_arm_1.phone'] })).toEqual(['field:v1_arm_1.phone']);
    expect(reads({ '!!': { var: 'v2_arm_1' } })).toEqual(['whole:v2_arm_1']);
  });

  it("inside an iterator reads the item's names, and the record's again through ../ or a climbing val", () => {
    expect(reads({ some: [{ var: 'list' }, { '==': [{ var: '' }, { var: 'phone' }] }] })).toEqual(['field:list', 'field:', 'field:phone']);
    expect(reads({ map: [[1], { var: '../' }] })).toEqual(['whole:']);
    expect(reads({ map: [[1], { val: [[1], 'dob'] }] })).toEqual(['field:dob']);
    // reduce's initial value is evaluated outside the iteration.
    expect(reads({ reduce: [[1], { var: 'current' }, { var: '' }] })).toEqual(['field:current', 'whole:']);
  });

  it('leaves preserved data alone and walks every key of a malformed object', () => {
    expect(reads({ preserve: { var: 'phone' } })).toEqual([]);
    expect(reads({ var: 'a', '!': { var: 'b' } })).toEqual(['field:a', 'field:b']);
  });

  it('counts a hostile depth as computed rather than walking it', () => {
    let deep: unknown = { var: 'phone' };
    for (let i = 0; i < 5000; i++) deep = { '!': deep };
    expect(reads(deep)).toEqual(['computed:']);
  });

  it("reads a skill's hard rules (logic and reported field) and soft rules' fields, whatever the draft's shape", () => {
    const definition = {
      nodes: {
        hard: { type: 'hard_rule', rules: [{ id: 'r1', field: 'sex', logic: { var: 'dob' } }, { field: 'age', logic: { var: 'age' } }, 'junk'] },
        soft: { type: 'soft_instruction', field: 'address', instruction: 'x' },
        broken: 7,
      },
    };
    expect(skillReads(definition, context).map((r) => `${r.rule} ${r.path} ${r.segments.join('.')}`)).toEqual([
      'r1 nodes.hard.rules[0].field sex',
      'r1 nodes.hard.rules[0].logic.var dob',
      'age#1 nodes.hard.rules[1].field age',
      'age#1 nodes.hard.rules[1].logic.var age',
      'soft nodes.soft.field address',
    ]);
    expect(skillReads('not a skill', context)).toEqual([]);
    expect(ruleContents(definition).get('r1')).toBe(JSON.stringify({ field: 'sex', id: 'r1', logic: { var: 'dob' } }));
  });
});
