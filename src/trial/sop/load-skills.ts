import path from 'node:path';
import type { z } from 'zod';
import { buildDefinition, loadDefinitionFile, loadDefinitionFiles, readDefinitionFolder, type BuiltDefinition, type DefinitionKind, type DefinitionSpec } from '../../core/definitions/index.js';
import { errorMessage } from '../../core/errors.js';
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
  /** The seed file it came from, or `database:<id>@<version>` for a version written through the API. */
  sourceFile: string;
  /** The stored version (skill_versions) this is; absent for a skill read straight from a file. */
  version?: number;
}

export const SKILL_KIND: DefinitionKind = {
  noun: 'skill',
  code: 'SKILL_INVALID',
  fileNames: /\.ya?ml$/i,
  folderSetting: 'SKILLS_DIR',
  formats: 'YAML',
  listRoute: 'GET /api/iit/skills',
};

const skillSpec: DefinitionSpec<typeof skillFileSchema, Skill> = { kind: SKILL_KIND, schema: skillFileSchema, build: buildSkill };

/**
 * Reads and validates one skill file. Everything that would otherwise fail in the middle of a run is found
 * here: unknown node types, missing targets, cycles without exit, rules that do not compile.
 */
export function loadSkill(filePath: string): Skill {
  return loadDefinitionFile(filePath, skillSpec);
}

/**
 * A skill definition already read (a stored version, a request body) checked exactly as a file is: schema, graph,
 * rules. `source` becomes its `sourceFile`.
 */
export function buildSkillDefinition(raw: unknown, source: string): BuiltDefinition<Skill> {
  return buildDefinition(raw, source, skillSpec);
}

/** Every .yaml/.yml file in `directory`; one invalid file fails the load, listing all invalid files. */
export function loadSkills(directory: string): Skill[] {
  return loadDefinitionFiles(directory, skillSpec);
}

/** A skill file that did not load: inactive until it is fixed, and shown to admins with its problems. */
export interface InvalidSkill {
  /** The id the file declares; its file name without extension when it declares none. */
  id: string;
  sourceFile: string;
  problems: string[];
}

/**
 * Every skill file of `directory`, each on its own, so one bad file (a typo, an operator the engine lacks) leaves
 * the others serving their trials. A second file with an id already taken is the invalid one, naming the first.
 */
export function readSkillFolder(directory: string): { skills: Skill[]; invalid: InvalidSkill[] } {
  const { definitions, failures } = readDefinitionFolder(directory, skillSpec);
  return {
    skills: definitions,
    invalid: failures.map((f) => ({ id: f.id ?? path.basename(f.file).replace(SKILL_KIND.fileNames, ''), sourceFile: f.file, problems: f.problems })),
  };
}

/** The graph checks and rule compilation the schema cannot do. */
function buildSkill(file: string, skill: z.output<typeof skillFileSchema>, problems: string[]): Skill {
  problems.push(...graphProblems(skill.start_node, skill.nodes));
  const compiled: Record<string, CompiledRules> = {};
  for (const [id, node] of Object.entries(skill.nodes)) {
    if (node.type !== 'hard_rule') continue;
    try {
      compiled[id] = compileRules(node.rules);
    } catch (error) {
      problems.push(`nodes.${id}.rules: ${errorMessage(error)}`);
    }
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
