import { createHash } from 'node:crypto';
import { and, asc, eq, inArray, or } from 'drizzle-orm';
import { queryRows, sql, type Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns, trialRecords, type ReviewRequest, type TaskRunStatus } from '../../core/db/schema/trial.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { QueueDef } from '../../core/jobs/queues.js';
import { createRunStore, type RunUpdate } from '../../runtime/runs/run-store.js';
import type { RunStep } from '../../runtime/runs/run-shape.js';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';
import { commitBatchWrites } from './batch-findings.js';
import { appendAuditEntries } from '../store/audit.js';
import { stableJson } from '../store/stable-json.js';
import { completeQcRunIfDone } from '../qc/qc-runs.js';
import { closeNoLongerFiring, raiseFindings, settleHeldQueries, type CheckedRules, type Finding } from './findings.js';
import { eventOf, loadRecordContext, recordIdsByProject } from './record-context.js';
import { takeOverOlderReviews } from './review-items.js';

export type TaskRun = typeof taskRuns.$inferSelect;

/** What a step of an SOP run saves besides the run itself: the findings it raised, the rules it ran, on which site. */
export interface TaskRunStepWrites {
  findings?: Finding[];
  checked?: CheckedRules;
  site?: string;
}

/**
 * Trial task runs are one user of the generic run store (src/runtime/runs): the store keeps lease, checkpoint,
 * review and orphan sweep; what is trial-specific comes in through these hooks.
 */
export const taskRunStore = createRunStore<typeof taskRuns, TaskRunStepWrites, { onRejectQueries: 'cancel' | 'close' }>(taskRuns, {
  label: 'Task run',
  idName: 'taskRunId',
  audit: { entityType: 'task_run', projectId: (run) => run.projectId, actor: (run) => `sop:${run.skillId}` },
  // Findings become queries through findings.ts, so a node executed again (after a crash, a retry, or in another
  // run) never raises a query twice.
  onCommit: commitRunWrites,
  // A batch (advanceTaskRuns) writes the findings of all its runs set-wise; see batch-findings.ts.
  onCommitMany: (tx, steps) => commitBatchWrites(tx, steps, commitRunWrites),
  async onDecision(tx, run, decision) {
    const reviewer = decision.actor;
    const comment = decision.comment ?? '';
    const why = `review ${decision.kind === 'approve' ? 'approved' : 'rejected'} by ${reviewer}${comment ? `: ${comment}` : ''}`;
    const audit = await settleHeldQueries(tx, { projectId: run.projectId, taskRunId: run.id, outcome: decision.kind === 'approve' ? 'release' : decision.onRejectQueries, actor: reviewer, reason: why });
    // A soft rule the model could not judge: the reviewer's reject is the verdict, and raises its query.
    const finding = run.reviewRequest?.finding;
    if (decision.kind === 'reject' && finding) {
      // The event and site the rule's run saw, as for a finding the engine raises itself.
      const record = await loadRecordContext(tx, run.projectId, run.recordId);
      const scope = { projectId: run.projectId, recordId: run.recordId, site: record.site, taskRunId: run.id, qcRunId: run.qcRunId, nodeId: run.reviewRequest!.node, actor: reviewer };
      audit.push(...(await raiseFindings(tx, scope, [{ ...finding, eventName: run.eventName || eventOf(record, finding.field), message: comment ? `${finding.message} (${comment})` : finding.message, value: null }])));
      // Raised by a person, so it goes to the site now rather than waiting for a review that has just happened.
      audit.push(...(await settleHeldQueries(tx, { projectId: run.projectId, taskRunId: run.id, outcome: 'release', actor: reviewer, reason: why })));
    }
    return audit;
  },
  /**
   * What a reviewer decides on: the record (each event's version, bumped by every import that changes it) and
   * the queries the run holds back for the review. Versions and ids, never values: the hash is shown to every
   * member, and a hash over a phone number would let one who sees it masked test guesses against it.
   */
  reviewFingerprint: async (tx, run) => (await reviewFingerprints(tx, [run])).get(run.id)!,
  reviewFingerprints,
  describeReviewedData: (run) => `record ${run.recordId}`,
  // The record changed under the review: the whole SOP runs again on it, from its first node, so every finding
  // the reviewer would act on is one of the current data (a finding that no longer fires is withdrawn when the
  // run lets its queries go; see settleHeldQueries).
  redoFrom: (run) => (run.steps[0]?.node as string | undefined) ?? run.currentNode,
});

/**
 * The writes of one step of a run: findings become queries through findings.ts, so a node executed again (after a
 * crash, a retry, or in another run) never raises a query twice.
 */
async function commitRunWrites(tx: Db, run: TaskRun, step: RunStep, update: RunUpdate & TaskRunStepWrites): Promise<AuditEntryInput[]> {
  const terminal = update.status === 'COMPLETED' || update.status === 'FAILED';
  const scope = { projectId: run.projectId, recordId: run.recordId, site: update.site ?? '', taskRunId: run.id, qcRunId: run.qcRunId, nodeId: step.node, actor: `sop:${run.skillId}` };
  const audit = await raiseFindings(tx, scope, update.findings ?? []);
  const stale = update.checked ? await closeNoLongerFiring(tx, { ...scope, skillId: run.skillId }, update.checked, update.findings ?? []) : { audit: [], reviewsToWithdraw: [] };
  audit.push(...stale.audit);
  // A run that ends without a review holding its queries back lets them go to the site.
  if (terminal) audit.push(...(await settleHeldQueries(tx, { projectId: run.projectId, taskRunId: run.id, outcome: 'release', actor: scope.actor, reason: `task run ${run.id} ended` })));
  const takeOver = update.status === 'SUSPENDED' ? await takeOverOlderReviews(tx, [run]) : { audit: [], superseded: [] };
  audit.push(...takeOver.audit);
  // Last: ending a review writes its audit entry at once, so every query row lock is taken before.
  await withdrawReviews(tx, stale.reviewsToWithdraw, `its findings no longer fire: ${scope.qcRunId ? `QC run ${scope.qcRunId}, ` : ''}task run ${run.id} checked record ${run.recordId} again`);
  await supersedeReviews(tx, takeOver.superseded);
  return audit;
}

/** Older reviews of a record and skill, replaced by a newer run's (review-items.ts): cancelled, their batches completed if done. */
export async function supersedeReviews(tx: Db, superseded: ReadonlyArray<{ id: string; by: string }>): Promise<void> {
  for (const { id, by } of superseded) {
    const cancelled = await taskRunStore.cancel(tx, id, 'system', `superseded: the review of task run ${by} replaces this one`);
    if (cancelled.qcRunId) await completeQcRunIfDone(tx, cancelled.qcRunId);
  }
}

/**
 * What a reviewer decides on, per run: the record (each event's version, bumped by every import that changes it)
 * and the queries the run holds back for the review. Versions and ids, never values: the hash is shown to every
 * member, and a hash over a phone number would let one who sees it masked test guesses against it. Two queries
 * whatever the number of runs.
 */
async function reviewFingerprints(tx: Db, runs: readonly TaskRun[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!runs.length) return out;
  const versions = await tx
    .select({ projectId: trialRecords.projectId, recordId: trialRecords.recordId, eventName: trialRecords.eventName, version: trialRecords.version })
    .from(trialRecords)
    .where(or(...[...recordIdsByProject(runs)].map(([projectId, recordIds]) => and(eq(trialRecords.projectId, projectId), inArray(trialRecords.recordId, recordIds)))))
    .orderBy(asc(trialRecords.eventName));
  const held = await tx
    .select({ id: pendingActions.id, status: pendingActions.status, heldBy: pendingActions.heldByTaskRunId })
    .from(pendingActions)
    .where(and(inArray(pendingActions.heldByTaskRunId, runs.map((run) => run.id)), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES])))
    .orderBy(asc(pendingActions.id));
  for (const run of runs) {
    const mine = versions.filter((v) => v.projectId === run.projectId && v.recordId === run.recordId);
    out.set(run.id, stableJson({ versions: mine.map((v) => [v.eventName, v.version]), held: held.filter((q) => q.heldBy === run.id).map((q) => [q.id, q.status]) }));
  }
  return out;
}

/**
 * Ends reviews that are about nothing any more, without a notice (nobody needs to look), and completes their
 * batch if that was its last run waiting: no worker advances a withdrawn run, so none would complete it.
 */
async function withdrawReviews(tx: Db, taskRunIds: readonly string[], reason: string): Promise<void> {
  for (const id of taskRunIds) {
    const withdrawn = await taskRunStore.cancel(tx, id, 'system', `review withdrawn: ${reason}`);
    if (withdrawn.qcRunId) await completeQcRunIfDone(tx, withdrawn.qcRunId);
  }
}

/** The dataHash a suspended run's review shows now (as the run store computes it), for a decision per finding. */
export async function reviewDataHash(tx: Db, run: TaskRun): Promise<string> {
  return createHash('sha256').update((await reviewFingerprints(tx, [run])).get(run.id)!).digest('hex');
}

export const getTaskRun = (db: Db, id: string): Promise<TaskRun | undefined> => taskRunStore.get(db, id);

/** Creates runs for records; for a batch, an existing (batch, record) run is kept, never duplicated. */
export async function createTaskRuns(
  db: Db,
  input: { projectId: string; skillId: string; skillVersion?: number; startNode: string; qcRunId?: string; recordIds: string[]; actor: string },
): Promise<TaskRun[]> {
  if (!input.recordIds.length) return [];
  // The record ids travel as one JSON parameter: bound one by one, 10 000 runs of seven columns would pass
  // PostgreSQL's 65 535 parameters, and binding them cost more than the insert.
  const created = await queryRows<{ id: string }>(db, sql`
    INSERT INTO ${taskRuns} (project_id, qc_run_id, skill_id, skill_version, record_id, status, current_node)
    SELECT ${input.projectId}, ${input.qcRunId ?? null}::uuid, ${input.skillId}, ${input.skillVersion ?? null}::integer, r.record_id, ${'PENDING' satisfies TaskRunStatus}, ${input.startNode}
    FROM jsonb_array_elements_text(${JSON.stringify(input.recordIds)}::jsonb) WITH ORDINALITY AS r(record_id, n)
    ORDER BY r.n
    ON CONFLICT DO NOTHING
    RETURNING id`);
  const order = new Map(created.map((r, i) => [r.id, i]));
  const rows = created.length ? (await db.select().from(taskRuns).where(inArray(taskRuns.id, created.map((r) => r.id)))).sort((a, b) => order.get(a.id)! - order.get(b.id)!) : [];
  await appendAuditEntries(db, rows.map((row) => ({ projectId: input.projectId, entityType: 'task_run' as const, entityId: row.id, action: 'created', actor: input.actor, newValue: { skillId: row.skillId, recordId: row.recordId, qcRunId: row.qcRunId } })));
  return rows;
}


/** Runs nobody is advancing (see agent/runs/orphans.ts), with no advance job waiting for them in `queue`. */
export async function findOrphanedRuns(db: Db, options: { staleMs: number; jobs: Jobs; queue: QueueDef<{ taskRunId: string }>; now?: Date; limit?: number }) {
  return taskRunStore.findOrphans(db, { ...options, isQueued: (ids) => options.jobs.isQueued(options.queue, 'taskRunId', ids) });
}

