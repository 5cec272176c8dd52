import { and, asc, eq, inArray, or } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import { withTransitions, type DataQuery } from '../queries.js';

/**
 * The findings each run shows with it in a list, in one query for a page of runs: those it holds back for its
 * review (what a reviewer decides, finding by finding) and those it saw fire that are already at the site.
 */
export async function runFindings(db: Db, projectId: string, taskRunIds: readonly string[]): Promise<Map<string, DataQuery[]>> {
  const out = new Map<string, DataQuery[]>();
  if (!taskRunIds.length) return out;
  const ids = [...taskRunIds];
  const rows = await db
    .select()
    .from(pendingActions)
    .where(and(eq(pendingActions.projectId, projectId), or(inArray(pendingActions.heldByTaskRunId, ids), inArray(pendingActions.lastTaskRunId, ids))))
    .orderBy(asc(pendingActions.recordId), asc(pendingActions.eventName), asc(pendingActions.field), asc(pendingActions.id));
  const wanted = new Set(ids);
  for (const row of rows) {
    const runId = row.heldByTaskRunId && wanted.has(row.heldByTaskRunId) ? row.heldByTaskRunId : row.lastTaskRunId!;
    const list = out.get(runId);
    if (list) list.push(withTransitions(row));
    else out.set(runId, [withTransitions(row)]);
  }
  return out;
}
