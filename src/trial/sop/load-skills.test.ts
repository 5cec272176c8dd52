import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../core/tools/registry.js';
import { registerBuiltinTools } from '../../agent/tools/builtin.js';
import { loadDemoRecords } from '../../agent/tools/demo-records.js';
import { loadSkill, loadSkills } from './load-skills.js';
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

  it('refuses soft-rule tools that are not registered', () => {
    const body = `
id: soft
name: Soft
start_node: s
nodes:
  s: { type: soft_instruction, instruction: judge, tools: [calculate_rate, teleport], on_pass: end_ok, on_fail: end_fail }
`;
    const tools = createToolRegistry();
    registerBuiltinTools(tools, loadDemoRecords());
    const error = errorOf(() => createSkillCatalog([loadSkill(skillFile(body))], tools));
    expect(error.message).toContain('nodes.s.tools: "teleport" is not a registered tool');
  });

  it('loads the shipped skills', () => {
    const skills = loadSkills(path.join(process.cwd(), 'skills'));
    expect(skills.length).toBeGreaterThan(0);
  });
});
