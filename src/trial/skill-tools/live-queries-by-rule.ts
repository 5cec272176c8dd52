import { and, count, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns } from '../../core/db/schema/trial.js';

/** Rule ids per statement: well under PostgreSQL's bind-parameter limit, and more than any skill has. */
const IDS_PER_QUERY = 1000;

/**
 * The live queries (open, answered, reopened, or held for a review) of `skillId`'s rules `ruleIds` in a project:
 * how many per rule, and the records they are on. A rule id alone could be another skill's, so queries are
 * matched to the skill through the task run that raised them.
 */
export async function liveQueriesByRule(db: Db, projectId: string, skillId: string, ruleIds: readonly string[]): Promise<Map<string, { count: number; recordIds: Set<string> }>> {
  const byRule = new Map<string, { count: number; recordIds: Set<string> }>();
  for (let start = 0; start < ruleIds.length; start += IDS_PER_QUERY) {
    const rows = await db
      .select({ ruleId: pendingActions.ruleId, recordId: pendingActions.recordId, queries: count() })
      .from(pendingActions)
      .innerJoin(taskRuns, eq(taskRuns.id, pendingActions.taskRunId))
      .where(
        and(
          eq(pendingActions.projectId, projectId),
          eq(taskRuns.skillId, skillId),
          inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]),
          inArray(pendingActions.ruleId, ruleIds.slice(start, start + IDS_PER_QUERY)),
        ),
      )
      .groupBy(pendingActions.ruleId, pendingActions.recordId);
    for (const row of rows) {
      const rule = byRule.get(row.ruleId) ?? { count: 0, recordIds: new Set<string>() };
      rule.count += Number(row.queries);
      rule.recordIds.add(row.recordId);
      byRule.set(row.ruleId, rule);
    }
  }
  return byRule;
}
