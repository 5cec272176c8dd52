import { createDefinitionCatalog, type DefinitionCatalog } from '../../core/definitions/index.js';
import { ClinAgentError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { readSkillFolder, SKILL_KIND, type InvalidSkill, type Skill } from './load-skills.js';

/**
 * The skills that can run, and the skill files that cannot. `get(id)` throws NOT_FOUND naming the known ids, and
 * SKILL_INVALID naming the problems for a skill whose file is invalid; `list()` holds only skills that can run.
 */
export interface SkillCatalog extends DefinitionCatalog<Skill> {
  /** Skill files left inactive, with every problem; admins see them in GET /api/iit/skills. */
  invalid(): InvalidSkill[];
}

/**
 * Skills loaded at start-up; soft-rule tool names are checked against the registry here, not mid-run. A skill
 * naming a tool that is not registered is left inactive like an invalid file, and the others serve.
 */
export function createSkillCatalog(skills: Skill[], tools: ToolRegistry, invalid: readonly InvalidSkill[] = []): SkillCatalog {
  const usable: Skill[] = [];
  const inactive = [...invalid];
  for (const skill of skills) {
    const problems = unknownTools(skill, tools);
    if (problems.length) inactive.push({ id: skill.id, sourceFile: skill.sourceFile, problems });
    else usable.push(skill);
  }
  const catalog = createDefinitionCatalog(usable, SKILL_KIND);
  return {
    ...catalog,
    invalid: () => inactive.map((skill) => ({ ...skill, problems: [...skill.problems] })),
    get(id) {
      const bad = catalog.has(id) ? undefined : inactive.find((skill) => skill.id === id);
      if (bad) throw inactiveSkill(bad);
      return catalog.get(id);
    },
  };
}

/** The skills folder as the server runs it: each invalid file logged as an error and left inactive, the rest serve. */
export function loadSkillCatalog(directory: string, tools: ToolRegistry, logger: Pick<Logger, 'error'>): SkillCatalog {
  const folder = readSkillFolder(directory);
  const catalog = createSkillCatalog(folder.skills, tools, folder.invalid);
  for (const skill of catalog.invalid()) {
    logger.error(
      { file: skill.sourceFile, skillId: skill.id, problems: skill.problems },
      `skill file ${skill.sourceFile} is invalid; skill "${skill.id}" stays inactive until the file is fixed and the server restarted, the other skills serve:\n- ${skill.problems.join('\n- ')}`,
    );
  }
  return catalog;
}

/** A skill without `projects` serves every project; one with a list serves those only. */
export function skillAppliesTo(skill: { projects?: readonly string[] | null }, projectId: string): boolean {
  return !skill.projects || skill.projects.includes(projectId);
}

function unknownTools(skill: Skill, tools: ToolRegistry): string[] {
  return Object.entries(skill.nodes).flatMap(([id, node]) =>
    node.type === 'soft_instruction' ? node.tools.filter((t) => !tools.get(t)).map((t) => `nodes.${id}.tools: "${t}" is not a registered tool`) : [],
  );
}

function inactiveSkill(skill: InvalidSkill): ClinAgentError {
  return new ClinAgentError(
    'SKILL_INVALID',
    `Skill "${skill.id}" is inactive: its file ${skill.sourceFile} is invalid:\n- ${skill.problems.join('\n- ')}\nFix the file and restart the server, or choose another skill (GET /api/iit/skills).`,
    { skillId: skill.id, file: skill.sourceFile, problems: skill.problems },
  );
}
