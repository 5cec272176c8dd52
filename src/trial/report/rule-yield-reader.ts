import { assertProjectReader } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { computeRuleYield, LOW_YIELD, type RuleYield, type RuleYieldFilter } from './rule-yield.js';

export interface RuleYieldReader {
  /** Any member reads it (counts only, no values, so identifier access does not matter); a non-member gets NOT_FOUND. */
  ruleYield(actor: User, projectId: string, filter?: RuleYieldFilter): Promise<{ rules: RuleYield[]; thresholds: typeof LOW_YIELD }>;
}

/** Rule yield as members read it, over the narrow slice it needs (the database and the membership check). */
export function createRuleYieldReader(deps: { db: Db; users: MembershipCheck }): RuleYieldReader {
  return {
    async ruleYield(actor, projectId, filter = {}) {
      await assertProjectReader(deps.users, actor, projectId);
      return { rules: await computeRuleYield(deps.db, projectId, filter), thresholds: LOW_YIELD };
    },
  };
}
