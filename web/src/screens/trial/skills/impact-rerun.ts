import type { SkillImpact } from '../../../api/skills-api';

/** The last impact the editor asked for, and the YAML it was asked for. */
export interface ImpactOf {
  impact: SkillImpact;
  yaml: string;
}

/** The QC run to offer once a version is active: its skill, the records to re-run (null: every record), and how many. */
export interface RerunOffer {
  skillId: string;
  recordIds: string[] | null;
  count: number;
}

/**
 * What to re-run after `activated` became the active version, from the last impact: nothing when that impact was of
 * another skill or of other text (it would name the wrong records), or listed nothing to re-run. A truncated list
 * stands for more records than the server lists, so the offer is then a run over every record.
 */
export function rerunAfterActivation(last: ImpactOf | null, activated: { skillId: string; yaml: string }): RerunOffer | null {
  if (!last || last.impact.skillId !== activated.skillId || last.yaml !== activated.yaml) return null;
  const { rerun } = last.impact;
  if (rerun.count === 0) return null;
  return { skillId: activated.skillId, recordIds: rerun.truncated ? null : rerun.recordIds, count: rerun.count };
}
