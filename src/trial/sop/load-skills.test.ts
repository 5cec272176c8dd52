import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../core/tools/registry.js';
import { registerBuiltinTools } from '../../demo-tools/builtin.js';
import { loadDemoRecords } from '../../demo-tools/demo-records.js';
import { loadSkill, loadSkills, readSkillFolder } from './load-skills.js';
import { createSkillCatalog } from './skill-catalog.js';
import { errorOf } from '../../testing/error-of.js';

function skillFile(body: string, name = 'skill.yaml'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-skill-'));
  writeFileSync(path.join(dir, name), body);
  return path.join(dir, name);
}

const VALID = `
id: checks
name: Checks
schedule: "0 6 * * 1"
start_node: hard
nodes:
  hard:
    type: hard_rule
    rules:
      - { field: age, logic: { ">=": [{ var: age }, 18] }, message: "Too young" }
    on_pass: end_ok
    on_fail: review
  review:
    type: human_review
    description: Confirm
    on_approve: end_ok
    on_reject: end_rejected
`;

describe('skill files', () => {
  it('loads a valid skill and compiles its rules once', () => {
    const skill = loadSkill(skillFile(VALID));
    expect(skill).toMatchObject({ id: 'checks', startNode: 'hard', schedule: '0 6 * * 1' });
    expect(skill.compiled.hard!.run({ age: 12 })).toEqual([expect.objectContaining({ field: 'age', message: 'Too young' })]);
  });

  it('rejects an unknown node type, naming the node', () => {
    const error = errorOf(() => loadSkill(skillFile(VALID.replace('type: human_review', 'type: phone_call'))));
    expect(error.code).toBe('SKILL_INVALID');
    expect(error.message).toMatch(/nodes\.review\.type: .*hard_rule, soft_instruction, human_review|nodes\.review: type must be one of/);
  });

  it('rejects a missing target and a cycle without exit in one report', () => {
    const body = `
id: loop
name: Loop
start_node: a
nodes:
  a: { type: hard_rule, rules: [{ field: x, logic: true, message: m }], on_pass: b, on_fail: b }
  b: { type: hard_rule, rules: [{ field: x, logic: true, message: m }], on_pass: a, on_fail: ghost }
`;
    const error = errorOf(() => loadSkill(skillFile(body)));
    expect(error.message).toContain('nodes.b.on_fail: "ghost" is neither a node nor an end state');
    expect(error.message).toContain('nodes.a: can never reach an end state');
  });

  it('rejects rules that do not compile, with the node and rule path', () => {
    const error = errorOf(() => loadSkill(skillFile(VALID.replace('">=": [{ var: age }, 18]', 'frobnicate: [{ var: age }]'))));
    expect(error.message).toContain('nodes.hard.rules:');
    expect(error.message).toContain('frobnicate');
  });

  it('rejects a bad cron expression with an example', () => {
    const error = errorOf(() => loadSkill(skillFile(VALID.replace('"0 6 * * 1"', '"every monday"'))));
    expect(error.message).toContain('schedule: must be a 5-field cron expression');
  });

  it('loads every file of a folder on its own: the good ones, and each bad one with its problems', () => {
    const dir = path.dirname(skillFile(VALID, 'a-good.yaml'));
    writeFileSync(path.join(dir, 'b-between.yaml'), VALID.replace('id: checks', 'id: ranges').replace('">=": [{ var: age }, 18]', 'between: [{ var: age }, 18, 75]'));
    writeFileSync(path.join(dir, 'c-again.yml'), VALID);
    writeFileSync(path.join(dir, 'd-broken.yaml'), 'id: [unclosed\n');

    const { skills, invalid } = readSkillFolder(dir);

    expect(skills.map((s) => s.id)).toEqual(['checks']);
    expect(invalid.map((s) => [s.id, path.basename(s.sourceFile)])).toEqual([['ranges', 'b-between.yaml'], ['checks', 'c-again.yml'], ['d-broken', 'd-broken.yaml']]);
    expect(invalid[0]!.problems).toEqual([expect.stringMatching(/^nodes\.hard\.rules: .*unknown operator "between"/s)]);
    expect(invalid[1]!.problems).toEqual([`id "checks" is already used by ${path.join(dir, 'a-good.yaml')}; skill ids must be unique`]);
    expect(invalid[2]!.problems).toEqual([expect.stringMatching(/^cannot be read as YAML: /)]);
    // The strict loader still refuses the folder as a whole, naming every bad file.
    expect(errorOf(() => loadSkills(dir)).details.failures).toHaveLength(3);
  });

  it('leaves a skill naming an unregistered tool inactive, and serves the others', () => {
    const body = `
id: soft
name: Soft
start_node: s
nodes:
  s: { type: soft_instruction, instruction: judge, tools: [calculate_rate, teleport], on_pass: end_ok, on_fail: end_fail }
`;
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    const catalog = createSkillCatalog([loadSkill(skillFile(body)), loadSkill(skillFile(VALID))], tools);
    expect(catalog.list().map((s) => s.id)).toEqual(['checks']);
    expect(catalog.invalid()).toEqual([expect.objectContaining({ id: 'soft', problems: ['nodes.s.tools: "teleport" is not a registered tool'] })]);
    const error = errorOf(() => catalog.get('soft'));
    expect(error).toMatchObject({ code: 'SKILL_INVALID', status: 422 });
    expect(error.message).toContain('nodes.s.tools: "teleport" is not a registered tool');
  });

  it('loads the shipped skills', () => {
    const skills = loadSkills(path.join(process.cwd(), 'skills'));
    expect(skills.length).toBeGreaterThan(0);
  });
});
