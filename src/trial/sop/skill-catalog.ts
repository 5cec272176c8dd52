import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { Skill } from './load-skills.js';

export interface SkillCatalog {
  list(): Skill[];
  get(id: string): Skill;
}

/** Skills loaded at start-up; soft-rule tool names are checked against the registry here, not mid-run. */
export function createSkillCatalog(skills: Skill[], tools: ToolRegistry): SkillCatalog {
  const problems = skills.flatMap((skill) =>
    Object.entries(skill.nodes).flatMap(([id, node]) =>
      node.type === 'soft_instruction' ? node.tools.filter((t) => !tools.get(t)).map((t) => `${skill.sourceFile}: nodes.${id}.tools: "${t}" is not a registered tool`) : [],
    ),
  );
  if (problems.length) throw new ClinAgentError('SKILL_INVALID', `Skill files name unknown tools:\n${problems.join('\n')}`, { problems });
  const byId = new Map(skills.map((s) => [s.id, s]));
  return {
    list: () => [...byId.values()],
    get(id) {
      const skill = byId.get(id);
      if (!skill) throw new ClinAgentError('NOT_FOUND', `Unknown skill "${id}". Known skills: ${[...byId.keys()].join(', ') || '(none)'} (GET /api/iit/skills).`, { skillId: id });
      return skill;
    },
  };
}
