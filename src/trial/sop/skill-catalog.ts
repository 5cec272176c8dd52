import { createDefinitionCatalog, type DefinitionCatalog } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { SKILL_KIND, type Skill } from './load-skills.js';

/** `get(id)` throws NOT_FOUND naming the known ids. */
export type SkillCatalog = DefinitionCatalog<Skill>;

/** Skills loaded at start-up; soft-rule tool names are checked against the registry here, not mid-run. */
export function createSkillCatalog(skills: Skill[], tools: ToolRegistry): SkillCatalog {
  const problems = skills.flatMap((skill) =>
    Object.entries(skill.nodes).flatMap(([id, node]) =>
      node.type === 'soft_instruction' ? node.tools.filter((t) => !tools.get(t)).map((t) => `${skill.sourceFile}: nodes.${id}.tools: "${t}" is not a registered tool`) : [],
    ),
  );
  if (problems.length) throw new ClinAgentError('SKILL_INVALID', `Skill files name unknown tools:\n${problems.join('\n')}`, { problems });
  return createDefinitionCatalog(skills, SKILL_KIND);
}

/** A skill without `projects` serves every project; one with a list serves those only. */
export function skillAppliesTo(skill: { projects?: readonly string[] | null }, projectId: string): boolean {
  return !skill.projects || skill.projects.includes(projectId);
}
