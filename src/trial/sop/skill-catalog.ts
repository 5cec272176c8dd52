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
  /** Skill files (and stored versions) left inactive, with every problem; admins see them in GET /api/iit/skills. */
  invalid(): InvalidSkill[];
  /**
   * The active skill; with `version`, that stored version (the one a task run was created with, so a run in flight
   * keeps its rules when another version is activated). A catalog of files has one version of each skill.
   */
  get(id: string, version?: number): Skill;
  /** Brings a database-backed catalog up to date (src/trial/skills); true when what it serves changed. */
  refresh(): Promise<boolean>;
}

/**
 * Skills loaded at start-up; soft-rule tool names are checked against the registry here, not mid-run. A skill
 * naming a tool that is not registered is left inactive like an invalid file, and the others serve.
 */
export function createSkillCatalog(skills: Skill[], tools: ToolRegistry, invalid: readonly InvalidSkill[] = []): SkillCatalog {
  const usable: Skill[] = [];
  const inactive = [...invalid];
  for (const skill of skills) {
    const problems = checkSkillTools(skill, tools);
    if (problems.length) inactive.push({ id: skill.id, sourceFile: skill.sourceFile, problems });
    else usable.push(skill);
  }
  const catalog = createDefinitionCatalog(usable, SKILL_KIND);
  return {
    ...catalog,
    invalid: () => inactive.map((skill) => ({ ...skill, problems: [...skill.problems] })),
    refresh: async () => false,
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
  reportInvalidSkills(catalog.invalid(), logger);
  return catalog;
}

/** Each inactive skill as one error line naming its file and every problem. */
export function reportInvalidSkills(invalid: readonly InvalidSkill[], logger: Pick<Logger, 'error'>): void {
  for (const skill of invalid) {
    logger.error(
      { file: skill.sourceFile, skillId: skill.id, problems: skill.problems },
      `skill file ${skill.sourceFile} is invalid; skill "${skill.id}" stays inactive until the file is fixed and the server restarted (or a valid version is activated: POST /api/iit/skills/:skillId/activate), the other skills serve:\n- ${skill.problems.join('\n- ')}`,
    );
  }
}

/** A skill without `projects` serves every project; one with a list serves those only. */
export function skillAppliesTo(skill: { projects?: readonly string[] | null }, projectId: string): boolean {
  return !skill.projects || skill.projects.includes(projectId);
}

/** Soft-rule tools the registry lacks, one `path: reason` line each. */
export function checkSkillTools(skill: Pick<Skill, 'nodes'>, tools: ToolRegistry): string[] {
  return Object.entries(skill.nodes).flatMap(([id, node]) =>
    node.type === 'soft_instruction' ? node.tools.filter((t) => !tools.get(t)).map((t) => `nodes.${id}.tools: "${t}" is not a registered tool`) : [],
  );
}

function inactiveSkill(skill: InvalidSkill): ClinAgentError {
  return new ClinAgentError(
    'SKILL_INVALID',
    `Skill "${skill.id}" is inactive: its file ${skill.sourceFile} is invalid:\n- ${skill.problems.join('\n- ')}\nFix it in the skill editor and activate the fixed version (POST /api/iit/skills/${skill.id}/activate), or fix the file and restart the server, or choose another skill (GET /api/iit/skills).`,
    { skillId: skill.id, file: skill.sourceFile, problems: skill.problems },
  );
}
