import { describe, expect, it } from 'vitest';
import type { SkillImpact } from '../../../api/skills-api';
import { rerunAfterActivation } from './impact-rerun';

function impactOf(rerun: SkillImpact['rerun'], skillId = 'weight-checks'): SkillImpact {
  return {
    skillId,
    isNewSkill: false,
    rules: { added: [], removed: [], changed: [{ ruleId: 'weight-max', node: 'checks', kind: 'hard', field: 'v1_arm_1.weight_kg', changes: ['logic'] }], unchanged: 0 },
    openQueries: { total: 0, byRule: [] },
    records: { evaluated: 30, affected: rerun.count, sample: [] },
    rerun,
    skippedNodes: [],
    elapsedMs: 3,
  };
}

const YAML = 'id: weight-checks\n';

describe('rerunAfterActivation', () => {
  it('offers the listed records of the impact of the text that was activated', () => {
    const last = { impact: impactOf({ recordIds: ['S017', 'S018'], count: 2, truncated: false }), yaml: YAML };
    expect(rerunAfterActivation(last, { skillId: 'weight-checks', yaml: YAML })).toEqual({ skillId: 'weight-checks', recordIds: ['S017', 'S018'], count: 2 });
  });

  it('offers nothing for an impact of other text, another skill, or with nothing to re-run', () => {
    const last = { impact: impactOf({ recordIds: ['S017'], count: 1, truncated: false }), yaml: YAML };
    expect(rerunAfterActivation(last, { skillId: 'weight-checks', yaml: `${YAML}# edited after Impact\n` })).toBeNull();
    expect(rerunAfterActivation(last, { skillId: 'bp-checks', yaml: YAML })).toBeNull();
    expect(rerunAfterActivation({ impact: impactOf({ recordIds: [], count: 0, truncated: false }), yaml: YAML }, { skillId: 'weight-checks', yaml: YAML })).toBeNull();
    expect(rerunAfterActivation(null, { skillId: 'weight-checks', yaml: YAML })).toBeNull();
  });

  it('re-runs every record when the list was cut short', () => {
    const last = { impact: impactOf({ recordIds: ['S001'], count: 12_000, truncated: true }), yaml: YAML };
    expect(rerunAfterActivation(last, { skillId: 'weight-checks', yaml: YAML })).toEqual({ skillId: 'weight-checks', recordIds: null, count: 12_000 });
  });
});
