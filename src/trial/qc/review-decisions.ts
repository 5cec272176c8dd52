import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { isUuid } from '../../core/ids.js';
import { settleHeldQueries } from '../sop/findings.js';
import { getTaskRun, reviewDataHash } from '../sop/task-runs.js';
import { appendAuditEntries } from '../store/audit.js';
import { reviewTaskRun } from './workers.js';
import { withTransaction } from '../../core/db/transaction.js';

export interface ReviewSelection {
  taskRunId: string;
  /** The run's reviewRequest.dataHash as the reviewer saw it. */
  dataHash?: string;
  /** The findings (held queries) decided; absent: the whole run, every finding it holds. */
  queryIds?: string[];
}

export interface ReviewOutcome {
  taskRunId: string;
  /** decided: the run's review is over; partly_decided: other findings of it still wait; refused: nothing applied. */
  status: 'decided' | 'partly_decided' | 'refused';
  /** For a decided run, how its review ended: decided finding by finding, approve when any finding went to the site. */
  decision?: 'approve' | 'reject';
  /** Findings this decision sent to the site or withdrew (absent for a whole run, decided by the run's review). */
  settled?: number;
  code?: string;
  reason?: string;
  message?: string;
  /** For a run still waiting: the dataHash of what it shows now. */
  dataHash?: string;
}

/**
 * One decision (approve sends to the site, reject withdraws) with one comment over a selection of the review queue:
 * whole runs, or single findings of a run, so a record with a height and a weight finding can have one approved and
 * the other rejected. Each run is decided on its own (one refused run never undoes another's); a run whose last held
 * finding is decided ends its review, going on as approved when any finding of it reached the site.
 */
export async function decideReviews(
  deps: { db: Db; jobs: Jobs },
  input: { projectId: string; actor: string; decision: 'approve' | 'reject'; comment: string; items: readonly ReviewSelection[] },
): Promise<{ decided: number; results: ReviewOutcome[] }> {
  const results: ReviewOutcome[] = [];
  for (const item of input.items) {
    try {
      results.push(await decideOne(deps, input, item));
    } catch (error) {
      // Only our refusals are one run's answer; anything else is a fault of the whole request.
      if (!(error instanceof ClinAgentError)) throw error;
      const { reason } = error.details as { reason?: string };
      results.push({ taskRunId: item.taskRunId, status: 'refused', code: error.code, reason, message: errorMessage(error) });
    }
  }
  return { decided: results.filter((r) => r.status !== 'refused').length, results };
}

async function decideOne(
  deps: { db: Db; jobs: Jobs },
  input: { projectId: string; actor: string; decision: 'approve' | 'reject'; comment: string },
  item: ReviewSelection,
): Promise<ReviewOutcome> {
  const run = await getTaskRun(deps.db, item.taskRunId);
  if (!run || run.projectId !== input.projectId) {
    throw new ClinAgentError('NOT_FOUND', `Task run "${item.taskRunId}" does not exist in project "${input.projectId}". Reload the review queue.`, { taskRunId: item.taskRunId });
  }
  if (!item.queryIds) {
    await reviewTaskRun(deps, run.id, input.decision, input.actor, input.comment, item.dataHash);
    return { taskRunId: run.id, status: 'decided', decision: input.decision };
  }
  // An empty list would decide no finding and then end the review as if every one had been decided.
  if (!item.queryIds.length) throw new ClinAgentError('VALIDATION_FAILED', `No finding of task run ${run.id} was selected; send the ids of the findings to decide, or leave queryIds out to decide the whole run.`, { field: 'queryIds' });
  const bad = item.queryIds.find((id) => !isUuid(id));
  if (bad !== undefined) throw new ClinAgentError('VALIDATION_FAILED', `"${bad}" is not a query id; send the ids of the findings shown with the run.`, { field: 'queryIds' });

  const settled = await withTransaction(deps.db, async (tx) => {
    const [current] = await tx.select().from(taskRuns).where(eq(taskRuns.id, run.id)).for('update');
    if (current?.status !== 'SUSPENDED') {
      throw new ClinAgentError('CONFLICT_STATE', `Task run ${run.id} (record ${run.recordId}) is ${current?.status ?? 'gone'}, not waiting for review; someone may have decided already. Reload the review queue.`, { taskRunId: run.id, status: current?.status, reason: 'already_decided' });
    }
    const stored = current.reviewRequest?.dataHash;
    const now = await reviewDataHash(tx, current);
    // The record (or what the run holds) changed since the run suspended: the whole-run decision checks it again.
    if (stored && stored !== now) return { stale: true as const, now };
    if (item.dataHash && stored && item.dataHash !== stored) {
      // The stored hash moves on when someone decides some of the run's findings, and when a decision was refused
      // because the record was imported again (the review is refreshed): either may be what this reviewer missed.
      throw new ClinAgentError('CONFLICT_STATE', `The review of record ${run.recordId} (task run ${run.id}) changed since you loaded it: someone else decided some of its findings, or the record was imported again. Reload it, check what it shows now and decide again.`, { taskRunId: run.id, reason: 'review_data_changed' });
    }
    const why = `finding ${input.decision === 'approve' ? 'approved' : 'rejected'} by ${input.actor} in the review of task run ${run.id}${input.comment ? `: ${input.comment}` : ''}`;
    const outcome = input.decision === 'approve' ? 'release' : (current.reviewRequest?.onRejectQueries ?? 'cancel');
    const audit = await settleHeldQueries(tx, { projectId: run.projectId, taskRunId: run.id, outcome, actor: input.actor, reason: why, queryIds: item.queryIds });
    const settledIds = new Set(audit.map((entry) => entry.entityId));
    const notHeld = item.queryIds!.filter((id) => !settledIds.has(id));
    if (notHeld.length) {
      throw new ClinAgentError('CONFLICT_STATE', `Finding${notHeld.length > 1 ? 's' : ''} ${notHeld.join(', ')} of record ${run.recordId} ${notHeld.length > 1 ? 'are' : 'is'} not held for this review (decided already, or of another run). Reload the review queue.`, { taskRunId: run.id, queryIds: notHeld, reason: 'already_decided' });
    }
    const [left] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(pendingActions)
      .where(and(eq(pendingActions.heldByTaskRunId, run.id), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES])));
    const remaining = Number(left?.n ?? 0);
    // What the review shows now: the findings still held are not a change of the data, so the decision of the rest
    // (and the run's own decision once none is left) is checked against this.
    const dataHash = await reviewDataHash(tx, current);
    await tx.update(taskRuns).set({ reviewRequest: { ...current.reviewRequest!, dataHash } }).where(eq(taskRuns.id, run.id));
    await appendAuditEntries(tx, audit);
    return { stale: false as const, settled: audit.length, remaining, dataHash };
  });
  if (settled.stale) {
    // The run store refuses it, checks the record again and says the data changed (review_data_changed). It is sent
    // as shown on the changed data, which never matches what the run stored: were the record changed back meanwhile,
    // a decision about some findings must not go through as the whole run's.
    await reviewTaskRun(deps, run.id, input.decision, input.actor, input.comment, settled.now);
    return { taskRunId: run.id, status: 'decided', decision: input.decision };
  }
  if (settled.remaining) return { taskRunId: run.id, status: 'partly_decided', settled: settled.settled, dataHash: settled.dataHash };
  // Every finding decided: the review is over; "approved" when any of its findings went to the site.
  const [sent] = await deps.db
    .select({ id: pendingActions.id })
    .from(pendingActions)
    .where(and(eq(pendingActions.lastTaskRunId, run.id), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]), isNull(pendingActions.heldByTaskRunId)))
    .limit(1);
  const decision = sent ? 'approve' : 'reject';
  await reviewTaskRun(deps, run.id, decision, input.actor, input.comment);
  return { taskRunId: run.id, status: 'decided', decision, settled: settled.settled };
}
