import type { Skill } from '../sop/load-skills.js';
import { skillRules, type SkillRule } from './skill-rules.js';

export interface RuleRef {
  ruleId: string;
  node: string;
  kind: 'hard' | 'soft';
  field: string;
}

export interface ChangedRule extends RuleRef {
  /** What differs: field, logic, message, severity (a soft rule: field, instruction, severity, tools, max_retries). */
  changes: string[];
}

export interface RuleDiff {
  added: RuleRef[];
  removed: RuleRef[];
  changed: ChangedRule[];
  unchanged: number;
}

/**
 * The rules a new version of a skill adds, removes and changes, by rule id (as QC keys findings and queries).
 * `current` undefined (a skill not yet active for the project) has no rules, so every rule is added. A rule moved
 * to another node is unchanged: its findings and queries are the same.
 */
export function diffSkillRules(current: Skill | undefined, proposed: Skill): RuleDiff {
  const before = new Map((current ? skillRules(current) : []).map((rule) => [rule.ruleId, rule]));
  const after = skillRules(proposed);
  const diff: RuleDiff = { added: [], removed: [], changed: [], unchanged: 0 };
  for (const rule of after) {
    const old = before.get(rule.ruleId);
    if (!old) {
      diff.added.push(refOf(rule));
      continue;
    }
    const changes = old.kind === rule.kind ? differingParts(old, rule) : ['kind'];
    if (changes.length) diff.changed.push({ ...refOf(rule), changes });
    else diff.unchanged += 1;
  }
  const kept = new Set(after.map((rule) => rule.ruleId));
  for (const rule of before.values()) if (!kept.has(rule.ruleId)) diff.removed.push(refOf(rule));
  return diff;
}

function refOf(rule: SkillRule): RuleRef {
  return { ruleId: rule.ruleId, node: rule.node, kind: rule.kind, field: rule.field };
}

function differingParts(before: SkillRule, after: SkillRule): string[] {
  const names = new Set([...Object.keys(before.parts), ...Object.keys(after.parts)]);
  return [...names].filter((name) => before.parts[name] !== after.parts[name]);
}
