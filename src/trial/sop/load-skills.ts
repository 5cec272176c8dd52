import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ClinAgentError, errorMessage, formatIssues } from '../../core/errors.js';
import { compileRules, type CompiledRules } from '../rules/index.js';
import { graphProblems } from './skill-graph.js';
import { skillFileSchema, type SopNode } from './skill-schema.js';

export interface Skill {
  id: string;
  name: string;
  description: string;
  projects?: string[];
  schedule?: string;
  startNode: string;
  nodes: Record<string, SopNode>;
  /** Hard rules of each hard_rule node, compiled once at load time. */
  compiled: Record<string, CompiledRules>;
  sourceFile: string;
}

/**
 * Reads and validates one skill file. Everything that would otherwise fail in the middle of a run is found
 * here: unknown node types, missing targets, cycles without exit, rules that do not compile.
 */
export function loadSkill(filePath: string): Skill {
  const file = path.resolve(filePath);
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClinAgentError('SKILL_INVALID', `${file}: cannot be read as YAML: ${errorMessage(error)}`, { file });
  }
  const parsed = skillFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues);
    throw new ClinAgentError('SKILL_INVALID', `${file} is not a valid skill:\n- ${problems.join('\n- ')}`, { file, problems });
  }
  const skill = parsed.data;
  const problems = graphProblems(skill.start_node, skill.nodes);
  const compiled: Record<string, CompiledRules> = {};
  for (const [id, node] of Object.entries(skill.nodes)) {
    if (node.type !== 'hard_rule') continue;
    try {
      compiled[id] = compileRules(node.rules);
    } catch (error) {
      problems.push(`nodes.${id}.rules: ${errorMessage(error)}`);
    }
  }
  if (problems.length) {
    throw new ClinAgentError('SKILL_INVALID', `${file} is not a valid skill:\n- ${problems.join('\n- ')}`, { file, problems });
  }
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    projects: skill.projects,
    schedule: skill.schedule,
    startNode: skill.start_node,
    nodes: skill.nodes,
    compiled,
    sourceFile: file,
  };
}

/** Every .yaml/.yml file in `directory`; one invalid file fails the load, listing all invalid files. */
export function loadSkills(directory: string): Skill[] {
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => /\.ya?ml$/i.test(name)).sort();
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the skills folder ${directory}: ${errorMessage(error)}. Set SKILLS_DIR to a folder of skill YAML files.`, { field: 'SKILLS_DIR' });
  }
  const skills: Skill[] = [];
  const failures: string[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    try {
      const skill = loadSkill(path.join(directory, name));
      const other = seen.get(skill.id);
      if (other) failures.push(`${skill.sourceFile}: id "${skill.id}" is already used by ${other}`);
      else {
        seen.set(skill.id, skill.sourceFile);
        skills.push(skill);
      }
    } catch (error) {
      failures.push(errorMessage(error));
    }
  }
  if (failures.length) throw new ClinAgentError('SKILL_INVALID', `Invalid skill files in ${directory}:\n${failures.join('\n')}`, { directory, failures });
  return skills;
}
