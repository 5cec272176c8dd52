import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSkillCatalog, loadSkillCatalog } from './skill-catalog.js';

function errorOf(run: () => unknown): ClinAgentError {
  try {
    run();
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('the skill catalog', () => {
  it('names an unknown skill id in 60 characters at most, however long the id sent', () => {
    const catalog = createSkillCatalog([], createToolRegistry());
    const sent = `no-such-skill-${'x'.repeat(1024 * 1024)}`;

    const error = errorOf(() => catalog.get(sent));

    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe(`Unknown skill "${sent.slice(0, 60)}…". Known skills: (none) (GET /api/iit/skills).`);
    expect(error.details).toEqual({ skillId: `${sent.slice(0, 60)}…` });
  });

  it('names a short unknown id whole', () => {
    const error = errorOf(() => createSkillCatalog([], createToolRegistry()).get('demo-core-check'));

    expect(error.message).toBe('Unknown skill "demo-core-check". Known skills: (none) (GET /api/iit/skills).');
  });

  it('refuses an invalid skill by its problems, and an unknown one as unknown', () => {
    const catalog = createSkillCatalog([], createToolRegistry(), [{ id: 'ranges', sourceFile: '/skills/ranges.yaml', problems: ['nodes.hard.rules: unknown operator "between"'] }]);

    const error = errorOf(() => catalog.get('ranges'));

    expect(error).toMatchObject({ code: 'SKILL_INVALID', status: 422, details: { skillId: 'ranges', file: '/skills/ranges.yaml', problems: ['nodes.hard.rules: unknown operator "between"'] } });
    expect(error.message).toBe('Skill "ranges" is inactive: its file /skills/ranges.yaml is invalid:\n- nodes.hard.rules: unknown operator "between"\nFix it in the skill editor and activate the fixed version (POST /api/iit/skills/ranges/activate), or fix the file and restart the server, or choose another skill (GET /api/iit/skills).');
    expect(catalog.list()).toEqual([]);
    expect(errorOf(() => catalog.get('other')).code).toBe('NOT_FOUND');
  });

  it('logs each invalid file of the folder as an error naming the file and every problem', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-skill-catalog-'));
    writeFileSync(path.join(dir, 'bad.yaml'), 'id: bad\nname: Bad\nnodes: {}\ncolour: red\n');
    const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];

    const catalog = loadSkillCatalog(dir, createToolRegistry(), { error: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }) } as never);

    const problems = catalog.invalid()[0]!.problems;
    expect(problems.length).toBeGreaterThan(1);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.fields).toEqual({ file: path.join(dir, 'bad.yaml'), skillId: 'bad', problems });
    expect(logged[0]!.message).toContain(path.join(dir, 'bad.yaml'));
    for (const problem of problems) expect(logged[0]!.message).toContain(problem);
  });
});
