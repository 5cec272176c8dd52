import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { createToolRegistry } from '../../core/tools/registry.js';
import { createSkillCatalog } from './skill-catalog.js';

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
});
