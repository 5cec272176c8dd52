import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import { buildSkillDefinition, type Skill } from '../sop/load-skills.js';
import { assertMayUseIdentifierRules, type IdentifierRuleAction } from '../skills/identifier-rule-access.js';
import { loadDictionaries } from '../skills/load-dictionaries.js';
import type { SkillProblem } from '../skills/skill-problem.js';
import { readSkillSource } from '../skills/skill-source.js';
import { validateSkill } from '../skills/validate-skill.js';

/** A skill as a request carries it before it is saved: the YAML, or the same definition as an object (one of the two). */
export interface ProposedSkillSource {
  yaml?: string;
  definition?: Record<string, unknown>;
}

/**
 * A skill that is not saved yet (the editor's text), checked as activation checks it for `projectId`: shape, graph,
 * every rule compiled, tools registered, and every field and event it reads against the project's dictionary. A
 * skill with any problem is refused with SKILL_INVALID (422) listing every problem (`details.problems`, as the
 * validate route lists them); VALIDATION_FAILED (400) when neither or both of `yaml` and `definition` are sent.
 * A skill reading identifier fields `access.actor` may not see in the project is refused first (FORBIDDEN, naming
 * them): its verdicts would tell them the values (identifier-rule-access.ts).
 */
export async function readProposedSkill(deps: { db: Db; tools: ToolRegistry }, projectId: string, input: ProposedSkillSource, access: { actor: User; action: IdentifierRuleAction }): Promise<Skill> {
  const hasYaml = typeof input.yaml === 'string';
  if (hasYaml === (input.definition !== undefined)) {
    throw new ClinAgentError('VALIDATION_FAILED', `Send the skill once: as "yaml" (the text of a skill file) or as "definition" (the same as a JSON object), ${hasYaml ? 'not both' : 'one of them is required'}.`, { field: hasYaml ? 'definition' : 'yaml' });
  }
  const source = readSkillSource(hasYaml ? { yaml: input.yaml! } : { definition: input.definition! });
  if (!source.definition) throw invalidSkill(source.problems, []);
  await assertMayUseIdentifierRules(deps.db, access.actor, { projectIds: [projectId], definition: source.definition, action: access.action });
  const { dictionaries, skipped } = await loadDictionaries(deps.db, [projectId]);
  const validation = validateSkill(source.definition, { tools: deps.tools, dictionaries, skipped });
  if (!validation.valid) throw invalidSkill(validation.problems, validation.notes);
  const built = buildSkillDefinition(source.definition, '(not saved)');
  // validateSkill checks what building checks and more; this is for a check one of them might add later.
  if (!built.definition) throw invalidSkill(built.problems.map((line) => ({ path: '(skill)', message: line })), validation.notes);
  return built.definition;
}

function invalidSkill(problems: readonly SkillProblem[], notes: readonly string[]): ClinAgentError {
  return new ClinAgentError('SKILL_INVALID', `The skill is not valid; fix each problem and try again:\n- ${problems.slice(0, 20).map((p) => `${p.path}: ${p.message}`).join('\n- ')}${problems.length > 20 ? `\n(${problems.length - 20} more in details.problems)` : ''}`, { problems, notes });
}
