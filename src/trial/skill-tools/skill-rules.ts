import { stableJson } from '../store/stable-json.js';
import type { Skill } from '../sop/load-skills.js';

/** One rule of a skill as QC keys its findings: a hard rule by its id, a soft rule by its node's id. */
export interface SkillRule {
  ruleId: string;
  node: string;
  kind: 'hard' | 'soft';
  /** The field its findings (queries) are attached to. */
  field: string;
  /** Its JSON Logic (hard rules), for what it reads. */
  logic?: unknown;
  /** What decides its verdicts and its queries, by part, each as stable JSON so equal parts compare equal. */
  parts: Record<string, string>;
}

/**
 * Every rule of `skill`, in node and rule order. Rule ids repeated in another node (allowed, though their findings
 * share one query) are kept once, the first, as QC's closing of findings that no longer fire treats them as one.
 */
export function skillRules(skill: Skill): SkillRule[] {
  const out = new Map<string, SkillRule>();
  for (const [node, definition] of Object.entries(skill.nodes)) {
    if (definition.type === 'hard_rule') {
      for (const rule of skill.compiled[node]?.rules ?? []) {
        if (out.has(rule.id)) continue;
        out.set(rule.id, {
          ruleId: rule.id,
          node,
          kind: 'hard',
          field: rule.field,
          logic: rule.logic,
          parts: { field: rule.field, logic: stableJson(rule.logic), message: rule.message, severity: rule.severity ?? 'error' },
        });
      }
    } else if (definition.type === 'soft_instruction' && !out.has(node)) {
      out.set(node, {
        ruleId: node,
        node,
        kind: 'soft',
        field: definition.field,
        parts: { field: definition.field, instruction: definition.instruction, severity: definition.severity, tools: stableJson(definition.tools), max_retries: String(definition.max_retries) },
      });
    }
  }
  return [...out.values()];
}
