import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { compileRules, createRuleEngine, type RuleEngine } from '../rules/index.js';
import { checkSkillTools } from '../sop/skill-catalog.js';
import { graphProblems } from '../sop/skill-graph.js';
import { skillFileSchema } from '../sop/skill-schema.js';
import { checkAgainstDictionary, type ProjectDictionary } from './dictionary-check.js';
import { problemsFromLines, type SkillProblem } from './skill-problem.js';

export interface SkillValidation {
  valid: boolean;
  problems: SkillProblem[];
  /** What was not checked and why (a project without a dictionary yet). */
  notes: string[];
}

/**
 * Everything that would otherwise fail in the middle of a QC run, reported at once: the skill's shape, its
 * flowchart, every rule's JSON Logic, its tools, and every field and event it names against the dictionary of each
 * project given (those the skill applies to; a project without a dictionary is skipped with a note).
 */
export function validateSkill(raw: unknown, deps: { tools: ToolRegistry; dictionaries: readonly ProjectDictionary[]; skipped?: readonly string[]; engine?: RuleEngine }): SkillValidation {
  const notes = (deps.skipped ?? []).map((projectId) => `project "${projectId}" has no data dictionary yet; its field names were not checked (import its dictionary, then validate again)`);
  const parsed = skillFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => ({ path: pathOf(issue.path), message: issue.message }));
    return { valid: false, problems, notes };
  }
  const skill = parsed.data;
  const engine = deps.engine ?? createRuleEngine();
  const problems: SkillProblem[] = [...problemsFromLines(graphProblems(skill.start_node, skill.nodes)), ...problemsFromLines(checkSkillTools(skill, deps.tools))];
  for (const [nodeId, node] of Object.entries(skill.nodes)) {
    if (node.type === 'hard_rule') problems.push(...compileProblems(nodeId, node.rules, engine));
  }
  const nameProject = deps.dictionaries.length > 1;
  for (const dictionary of deps.dictionaries) problems.push(...checkAgainstDictionary(skill, dictionary, engine, { nameProject }));
  const unique = [...new Map(problems.map((p) => [`${p.path}\u0000${p.message}`, p])).values()];
  return { valid: unique.length === 0, problems: unique, notes };
}

/** Each rule that does not compile, at its own path and naming its id (compileRules reports them all at once). */
function compileProblems(nodeId: string, rules: unknown[], engine: RuleEngine): SkillProblem[] {
  try {
    compileRules(rules as Parameters<typeof compileRules>[0], { engine });
    return [];
  } catch (error) {
    const listed = ClinAgentError.isInstance(error) ? error.details.problems : undefined;
    if (!Array.isArray(listed)) return [{ path: `nodes.${nodeId}.rules`, message: errorMessage(error) }];
    return (listed as Array<{ index: number; ruleId?: string; path: string; message: string }>).map((p) => ({
      path: `nodes.${nodeId}.rules[${p.index}]${p.path === '(rule)' ? '' : `.${p.path}`}`,
      message: `rule "${p.ruleId ?? `#${p.index}`}" (node ${nodeId}): ${p.message}`,
    }));
  }
}

function pathOf(path: ReadonlyArray<PropertyKey>): string {
  if (!path.length) return '(skill)';
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i ? '.' : ''}${String(part)}`)).join('');
}
