import type { Db } from '../../core/db/connect.js';
import { compileRules, type CompiledRules, type HardRule } from '../rules/index.js';
import type { Skill } from '../sop/load-skills.js';
import { withIdentifiersBlank } from './blank-identifiers.js';
import { liveQueriesByRule } from './live-queries-by-rule.js';
import { forEachRecordBatch } from './record-batches.js';
import { diffSkillRules, type RuleDiff } from './rule-diff.js';
import type { SkippedNode } from './skill-findings.js';

/** Records named in `records.sample`: enough to look at a few, not a listing. */
const IMPACT_SAMPLE_SIZE = 20;
/** Record ids listed to re-run; `rerun.count` counts them all. More than this is a re-run of the whole trial. */
const MAX_RERUN_IDS = 10_000;

export interface AmendmentImpact {
  skillId: string;
  /** True when no version of the skill is active for the project yet: every rule is new. */
  isNewSkill: boolean;
  rules: RuleDiff;
  openQueries: {
    total: number;
    /** `close_if_rule_removed`: a re-run closes them as no longer firing; `recheck`: a re-run decides whether they still fire. */
    byRule: Array<{ ruleId: string; count: number; action: 'close_if_rule_removed' | 'recheck' }>;
  };
  records: {
    evaluated: number;
    /** Records where an added, removed or changed rule's verdict (fires, and on which field) differs between versions. */
    affected: number;
    sample: Array<{ recordId: string; ruleIds: string[] }>;
  };
  /** What to pass to POST /qc-runs as recordIds once the new version is active: affected records and those with live queries of removed or changed rules. */
  rerun: { recordIds: string[]; count: number; truncated: boolean };
  /** Soft rules added or changed: a model judges them, so their new verdicts are not known before a run. */
  skippedNodes: SkippedNode[];
  elapsedMs: number;
}

/**
 * What activating `proposed` instead of `current` (the active version for the project, if any) would change, before
 * it is activated: the rules it adds, removes and changes, the live queries of the removed and changed ones, and the
 * records where those rules' verdicts differ between the two versions, evaluated on the stored data in batches.
 * `hidden`: the identifier fields of a reader who may not see them, blank in the data the rules run on (the caller
 * refuses rules reading them; this is the second line). Writes nothing.
 */
export async function amendmentImpact(db: Db, input: { projectId: string; current: Skill | undefined; proposed: Skill; hidden?: (field: string) => boolean }): Promise<AmendmentImpact> {
  const started = performance.now();
  const { projectId, current, proposed } = input;
  const diff = diffSkillRules(current, proposed);
  const queried = await liveQueriesByRule(db, projectId, proposed.id, [...diff.removed, ...diff.changed].map((rule) => rule.ruleId));
  const byRule = [
    ...diff.removed.map((rule) => ({ ruleId: rule.ruleId, action: 'close_if_rule_removed' as const })),
    ...diff.changed.map((rule) => ({ ruleId: rule.ruleId, action: 'recheck' as const })),
  ].flatMap((rule) => {
    const count = queried.get(rule.ruleId)?.count ?? 0;
    return count ? [{ ...rule, count }] : [];
  });

  const hardIds = (refs: RuleDiff['added']) => refs.filter((rule) => rule.kind === 'hard').map((rule) => rule.ruleId);
  const before = current ? subset(current, [...hardIds(diff.removed), ...hardIds(diff.changed)]) : undefined;
  const after = subset(proposed, [...hardIds(diff.added), ...hardIds(diff.changed)]);
  const affected = new Map<string, string[]>();
  let evaluated = 0;
  if (before || after) {
    evaluated = await forEachRecordBatch(db, projectId, async (records) => {
      for (const shown of records) {
        const record = input.hidden ? withIdentifiersBlank(shown, input.hidden) : shown;
        const ruleIds = differingVerdicts(before ? await before.runInSlices(record.data) : [], after ? await after.runInSlices(record.data) : []);
        if (ruleIds.length) affected.set(record.recordId, ruleIds);
      }
    });
  }

  const rerun = new Set(affected.keys());
  for (const { recordIds } of queried.values()) for (const recordId of recordIds) rerun.add(recordId);
  // Natural order, as the record list shows them (2 before 10).
  const rerunIds = [...rerun].sort(new Intl.Collator('en', { numeric: true }).compare);
  return {
    skillId: proposed.id,
    isNewSkill: current === undefined,
    rules: diff,
    openQueries: { total: byRule.reduce((sum, rule) => sum + rule.count, 0), byRule },
    records: { evaluated, affected: affected.size, sample: [...affected].slice(0, IMPACT_SAMPLE_SIZE).map(([recordId, ruleIds]) => ({ recordId, ruleIds })) },
    rerun: { recordIds: rerunIds.slice(0, MAX_RERUN_IDS), count: rerunIds.length, truncated: rerunIds.length > MAX_RERUN_IDS },
    skippedNodes: [...diff.added, ...diff.changed]
      .filter((rule) => rule.kind === 'soft')
      .map((rule) => ({ node: rule.node, reason: 'soft rule added or changed: a model judges it, so which records it changes is known only by running it; re-run every record to apply it' })),
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** The named hard rules of a skill, compiled on their own; undefined when there are none. */
function subset(skill: Skill, ruleIds: readonly string[]): CompiledRules | undefined {
  if (!ruleIds.length) return undefined;
  const wanted = new Set(ruleIds);
  const rules: HardRule[] = [];
  for (const compiled of Object.values(skill.compiled)) {
    for (const rule of compiled.rules) {
      if (wanted.delete(rule.id)) rules.push(rule);
    }
  }
  // The rules compiled once already, when the skill loaded; compiling them again cannot fail.
  return rules.length ? compileRules(rules) : undefined;
}

/** Rule ids whose verdict differs: fires in one version only, or on another field (a different query). */
function differingVerdicts(before: ReadonlyArray<{ ruleId: string; field: string }>, after: ReadonlyArray<{ ruleId: string; field: string }>): string[] {
  const fieldBefore = new Map(before.map((v) => [v.ruleId, v.field]));
  const fieldAfter = new Map(after.map((v) => [v.ruleId, v.field]));
  const ids = new Set([...fieldBefore.keys(), ...fieldAfter.keys()]);
  return [...ids].filter((id) => fieldBefore.get(id) !== fieldAfter.get(id));
}
