import type { Db } from '../../core/db/connect.js';
import type { IdentifierMask } from '../identifiers.js';
import type { Skill } from '../sop/load-skills.js';
import { withIdentifiersBlank } from './blank-identifiers.js';
import { forEachRecordBatch } from './record-batches.js';
import { hardRuleFindings, skippedSoftNodes, type SkillFinding, type SkippedNode } from './skill-findings.js';

/** Findings listed in one answer; `fired` still counts them all. A rule firing on every record of a large trial would otherwise answer megabytes. */
export const MAX_DRY_RUN_FINDINGS = 1000;

type DryRunFinding = SkillFinding & { masked: boolean };

export interface DryRunResult {
  skillId: string;
  /** Records evaluated. */
  records: number;
  /** Findings in all (every rule that fired on every record). */
  fired: number;
  /** Records with at least one finding. */
  recordsFiring: number;
  /** The first MAX_DRY_RUN_FINDINGS findings, in record-id order. */
  firing: DryRunFinding[];
  truncated: boolean;
  skippedNodes: SkippedNode[];
  elapsedMs: number;
}

/**
 * Which records a skill's hard rules would flag, on one record or the whole trial, writing nothing: no task run, no
 * query, no audit entry. Records are read in batches (record-batches.ts), so a 10 000-subject trial answers in
 * seconds. `mask` is the reader's view of identifier fields: a finding's value on one is withheld as queries
 * withhold it, and for a reader who may not see them the rules run on the record with identifiers blank (the
 * caller has refused a skill that reads one: readProposedSkill). Access is the caller's to check.
 */
export async function dryRunSkill(db: Db, input: { projectId: string; skill: Skill; recordId?: string; mask: IdentifierMask }): Promise<DryRunResult> {
  const started = performance.now();
  const firing: DryRunFinding[] = [];
  let fired = 0;
  let recordsFiring = 0;
  const records = await forEachRecordBatch(
    db,
    input.projectId,
    async (batch) => {
      for (const record of batch) {
        const findings = await hardRuleFindings(input.skill, input.mask.isMasking ? withIdentifiersBlank(record, input.mask.isIdentifier) : record);
        if (findings.length) recordsFiring += 1;
        fired += findings.length;
        for (const finding of findings) if (firing.length < MAX_DRY_RUN_FINDINGS) firing.push(input.mask.query(finding));
      }
    },
    { recordId: input.recordId },
  );
  return { skillId: input.skill.id, records, fired, recordsFiring, firing, truncated: fired > firing.length, skippedNodes: skippedSoftNodes(input.skill), elapsedMs: Math.round(performance.now() - started) };
}
