import { baseFieldName } from '../identifiers.js';
import { createRuleEngine, logicFieldReferences } from '../rules/index.js';
import type { Skill } from '../sop/load-skills.js';
import type { TrialField } from '../store/types.js';
import { skillRules } from './skill-rules.js';

export type DictionaryChange = 'field_removed' | 'type_changed' | 'choices_changed';

/** A rule that reads a field a new dictionary removes or changes: it may stop working, or start firing differently. */
export interface RuleAffected {
  skillId: string;
  node: string;
  ruleId: string;
  /** The dictionary field that changes (a checkbox choice column `x___1` is field `x`). */
  field: string;
  change: DictionaryChange;
}

/**
 * The rules of `skills` that read a field `next` removes or changes against `stored`: removed, another field type
 * (text to integer changes how values compare), or other choice codes (a rule comparing with a code that no longer
 * exists never fires). Labels, notes and validation bounds leave rules as they are. Empty when nothing is stored
 * yet (a first import changes no rule's meaning). The caller picks the skills that apply to the project.
 */
export function rulesAffectedByDictionary(skills: readonly Skill[], stored: readonly TrialField[], next: readonly TrialField[]): RuleAffected[] {
  const changes = dictionaryChanges(stored, next);
  if (!changes.size) return [];
  const affected: RuleAffected[] = [];
  const engine = createRuleEngine();
  for (const skill of skills) {
    for (const rule of skillRules(skill)) {
      const reads = rule.logic === undefined ? [] : logicFieldReferences(rule.logic, engine).map((reference) => reference.name);
      const fields = new Set([rule.field, ...reads].map(baseFieldName));
      for (const field of fields) {
        const change = changes.get(field);
        if (change) affected.push({ skillId: skill.id, node: rule.node, ruleId: rule.ruleId, field, change });
      }
    }
  }
  return affected;
}

function dictionaryChanges(stored: readonly TrialField[], next: readonly TrialField[]): Map<string, DictionaryChange> {
  const nextByName = new Map(next.map((field) => [field.fieldName, field]));
  const changes = new Map<string, DictionaryChange>();
  for (const before of stored) {
    const after = nextByName.get(before.fieldName);
    if (!after) changes.set(before.fieldName, 'field_removed');
    else if (after.fieldType !== before.fieldType) changes.set(before.fieldName, 'type_changed');
    else if (choiceCodes(after) !== choiceCodes(before)) changes.set(before.fieldName, 'choices_changed');
  }
  return changes;
}

function choiceCodes(field: TrialField): string {
  return field.choices.map((choice) => choice.code).sort().join('\u0000');
}
