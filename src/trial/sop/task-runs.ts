import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../core/db/connect.js';
import { taskRuns, trialRecords, type ReviewRequest, type TaskRunStatus } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';
import { appendAuditEntries } from '../store/audit.js';
import { markNoLongerFiring, raiseFindings, settleHeldQueries, type ClearedCheck, type Finding } from './findings.js';

export type TaskRun = typeof taskRuns.$inferSelect;

export interface StepRecord {
  node: string;
  type: string;
  at: string;
  outcome: 'pass' | 'fail' | 'error' | 'suspended' | 'approve' | 'reject' | 'notified' | 'notify_failed';
  next?: string;
  detail?: unknown;
}

/**
 * Default time a worker owns a run without renewing it (QC_LEASE_MS). The worker renews the lease every third of
 * it while a step runs (an LLM step can take minutes), so only a dead worker lets it lapse; with the sweep this
 * puts a run left by a killed worker back to work within about 30 s.
 */
export const DEFAULT_LEASE_MS = 15_000;

export async function getTaskRun(db: Db, id: string): Promise<TaskRun | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(taskRuns).where(eq(taskRuns.id, id));
  return row;
}

/** Creates runs for records; for a batch, an existing (batch, record) run is kept, never duplicated. */
export async function createTaskRuns(
  db: Db,
  input: { projectId: string; skillId: string; startNode: string; qcRunId?: string; recordIds: string[]; actor: string },
): Promise<TaskRun[]> {
  if (!input.recordIds.length) return [];
  const rows = await db
    .insert(taskRuns)
    .values(input.recordIds.map((recordId) => ({ projectId: input.projectId, qcRunId: input.qcRunId ?? null, skillId: input.skillId, recordId, status: 'PENDING' as TaskRunStatus, currentNode: input.startNode })))
    .onConflictDoNothing()
    .returning();
  await appendAuditEntries(db, rows.map((row) => ({ projectId: input.projectId, entityType: 'task_run' as const, entityId: row.id, action: 'created', actor: input.actor, newValue: { skillId: row.skillId, recordId: row.recordId, qcRunId: row.qcRunId } })));
  return rows;
}

/**
 * Takes the run for `workerId` (one owner per advance) when it is pending, or running with no live owner. The single conditional
 * UPDATE is what makes two workers (or a retried job) never advance the same run at once.
 */
export async function acquireLease(db: Db, id: string, workerId: string, leaseMs = DEFAULT_LEASE_MS, now = new Date()): Promise<TaskRun | undefined> {
  const [row] = await db
    .update(taskRuns)
    .set({ status: 'RUNNING', leaseOwner: workerId, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
    .where(
      and(
        eq(taskRuns.id, id),
        or(eq(taskRuns.status, 'PENDING'), and(eq(taskRuns.status, 'RUNNING'), or(isNull(taskRuns.leaseUntil), lt(taskRuns.leaseUntil, now)))),
      ),
    )
    .returning();
  return row;
}

/**
 * Saves one executed node: its step, the findings it raised or cleared and the next node, in one transaction,
 * and only if this worker still owns the run at that node. Findings become queries through findings.ts, so a
 * node executed again (after a crash, a retry, or in another run) never raises a query twice.
 */
export async function commitStep(
  db: Db,
  run: TaskRun,
  workerId: string,
  step: StepRecord,
  update: {
    nextNode: string;
    status: TaskRunStatus;
    findings?: Finding[];
    cleared?: ClearedCheck[];
    site?: string;
    onApprove?: string;
    onReject?: string;
    reviewRequest?: ReviewRequest;
    error?: string;
  },
  leaseMs = DEFAULT_LEASE_MS,
): Promise<TaskRun | undefined> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    const now = new Date();
    const terminal = update.status === 'COMPLETED' || update.status === 'FAILED';
    const releases = terminal || update.status === 'SUSPENDED';
    const [saved] = await tx
      .update(taskRuns)
      .set({
        status: update.status,
        currentNode: update.nextNode,
        steps: sql`${taskRuns.steps} || ${JSON.stringify([step])}::jsonb`,
        onApprove: update.onApprove ?? null,
        onReject: update.onReject ?? null,
        reviewRequest: update.reviewRequest ?? null,
        error: update.error ?? null,
        leaseOwner: releases ? null : workerId,
        leaseUntil: releases ? null : new Date(now.getTime() + leaseMs),
        recoveredAt: null,
        updatedAt: now,
        completedAt: terminal ? now : null,
      })
      .where(and(eq(taskRuns.id, run.id), eq(taskRuns.status, 'RUNNING'), eq(taskRuns.leaseOwner, workerId), eq(taskRuns.currentNode, step.node)))
      .returning();
    if (!saved) return undefined;
    const scope = { projectId: run.projectId, recordId: run.recordId, site: update.site ?? '', taskRunId: run.id, qcRunId: run.qcRunId, nodeId: step.node, actor: `sop:${run.skillId}` };
    const audit: AuditEntryInput[] = [
      ...(await raiseFindings(tx, scope, update.findings ?? [])),
      ...(await markNoLongerFiring(tx, scope, update.cleared ?? [])),
      // A run that ends without a review holding its queries back lets them go to the site.
      ...(terminal ? await settleHeldQueries(tx, { projectId: run.projectId, taskRunId: run.id, outcome: 'release', actor: scope.actor, reason: `task run ${run.id} ended` }) : []),
    ];
    // Every change of a run is in the audit trail: a node's outcome, and the run's status when it changes.
    audit.push({
      projectId: run.projectId,
      entityType: 'task_run',
      entityId: run.id,
      action: update.status === 'RUNNING' ? `node:${step.node}:${step.outcome}` : update.status.toLowerCase(),
      actor: scope.actor,
      oldValue: { status: 'RUNNING', node: step.node },
      newValue: { status: update.status, node: update.nextNode },
    });
    await appendAuditEntries(tx, audit);
    return saved;
  });
}

/** Extends the lease of a run this worker owns while a long step runs; false when the run is no longer ours. */
export async function renewLease(db: Db, id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
  const now = new Date();
  const [row] = await db
    .update(taskRuns)
    .set({ leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
    .where(and(eq(taskRuns.id, id), eq(taskRuns.status, 'RUNNING'), eq(taskRuns.leaseOwner, owner)))
    .returning({ id: taskRuns.id });
  return Boolean(row);
}

/** Gives the run up without saving a step (the model is rate limited), so the job's retry can take it at once. */
export async function releaseLease(db: Db, id: string, owner: string): Promise<void> {
  await db.update(taskRuns).set({ leaseOwner: null, leaseUntil: null, updatedAt: new Date() }).where(and(eq(taskRuns.id, id), eq(taskRuns.leaseOwner, owner)));
}

/**
 * A reviewer's decision on a suspended run. Only one decision can win: the UPDATE requires SUSPENDED, so a
 * second reviewer (or a double click) gets CONFLICT_STATE with the run's current state.
 */
export async function decideReview(
  db: Db,
  id: string,
  decision: 'approve' | 'reject',
  reviewer: string,
  comment: string,
  /** What a reject does to the queries the review holds back (the human_review node's `on_reject_queries`). */
  onRejectQueries: 'cancel' | 'close' = 'cancel',
): Promise<TaskRun> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    const now = new Date();
    const [row] = await tx
      .update(taskRuns)
      .set({
        status: 'RUNNING',
        currentNode: decision === 'approve' ? sql`coalesce(${taskRuns.onApprove}, 'end_approved')` : sql`coalesce(${taskRuns.onReject}, 'end_rejected')`,
        review: { reviewer, decision, comment, decidedAt: now.toISOString() },
        steps: sql`${taskRuns.steps} || ${JSON.stringify([{ node: 'review', type: 'human_review', at: now.toISOString(), outcome: decision, detail: { reviewer, comment } }])}::jsonb`,
        leaseOwner: null,
        leaseUntil: null,
        updatedAt: now,
      })
      .where(and(eq(taskRuns.id, id), eq(taskRuns.status, 'SUSPENDED')))
      .returning();
    if (!row) {
      const [current] = await tx.select({ status: taskRuns.status, currentNode: taskRuns.currentNode }).from(taskRuns).where(eq(taskRuns.id, id));
      if (!current) throw new ClinAgentError('NOT_FOUND', `Task run "${id}" does not exist. Check the id.`, { taskRunId: id });
      throw new ClinAgentError('CONFLICT_STATE', `Task run ${id} is ${current.status} (at ${current.currentNode}), not waiting for review; someone may have decided already. Reload to see its state.`, { taskRunId: id, status: current.status, currentNode: current.currentNode });
    }
    const why = `review ${decision === 'approve' ? 'approved' : 'rejected'} by ${reviewer}${comment ? `: ${comment}` : ''}`;
    const audit = await settleHeldQueries(tx, { projectId: row.projectId, taskRunId: id, outcome: decision === 'approve' ? 'release' : onRejectQueries, actor: reviewer, reason: why });
    // A soft rule the model could not judge: the reviewer's reject is the verdict, and raises its query.
    const finding = row.reviewRequest?.finding;
    if (decision === 'reject' && finding) {
      const [record] = await tx.select({ site: trialRecords.site }).from(trialRecords).where(and(eq(trialRecords.projectId, row.projectId), eq(trialRecords.recordId, row.recordId))).limit(1);
      const site = record?.site ?? '';
      const scope = { projectId: row.projectId, recordId: row.recordId, site, taskRunId: id, qcRunId: row.qcRunId, nodeId: row.reviewRequest!.node, actor: reviewer };
      const raised = await raiseFindings(tx, scope, [{ ...finding, eventName: row.eventName, message: comment ? `${finding.message} (${comment})` : finding.message, value: null }]);
      audit.push(...raised);
      // Raised by a person, so it goes to the site now rather than waiting for a review that has just happened.
      audit.push(...(await settleHeldQueries(tx, { projectId: row.projectId, taskRunId: id, outcome: 'release', actor: reviewer, reason: why })));
    }
    audit.push({ projectId: row.projectId, entityType: 'task_run', entityId: id, action: decision === 'approve' ? 'review_approved' : 'review_rejected', actor: reviewer, oldValue: { status: 'SUSPENDED' }, newValue: { status: 'RUNNING', node: row.currentNode }, reason: comment });
    await appendAuditEntries(tx, audit);
    return row;
  });
}

/**
 * Runs nobody is advancing, untouched for `staleMs`:
 * - RUNNING with an expired lease: its worker died mid-run (its pg-boss job may still look active, and
 *   would only expire much later), so it is always picked up;
 * - PENDING or lease-less RUNNING with no job waiting for it in `jobQueue` (the job was lost, or a dead
 *   worker had fetched it: workers fetch jobs in batches, so a killed one leaves `active` jobs whose runs
 *   never started). A run whose job is merely queued (created or retry) is not orphaned: re-enqueueing it
 *   would only add duplicate jobs. A live worker's fetched-but-not-started job may get a duplicate; the
 *   run's lease makes that harmless.
 */
export async function findOrphanedRuns(db: Db, options: { staleMs: number; jobQueue: string; jobSchema: string; now?: Date; limit?: number }): Promise<Array<{ id: string; abandoned: boolean }>> {
  const now = options.now ?? new Date();
  const staleBefore = new Date(now.getTime() - options.staleMs);
  const candidates = await db
    .select({ id: taskRuns.id, status: taskRuns.status, leaseUntil: taskRuns.leaseUntil })
    .from(taskRuns)
    .where(and(inArray(taskRuns.status, ['PENDING', 'RUNNING']), or(isNull(taskRuns.leaseUntil), lt(taskRuns.leaseUntil, now)), lt(taskRuns.updatedAt, staleBefore)))
    .limit(options.limit ?? 500);
  const abandoned = candidates.filter((c) => c.status === 'RUNNING' && c.leaseUntil !== null);
  const waiting = candidates.filter((c) => !abandoned.includes(c));
  if (!waiting.length) return abandoned.map(({ id }) => ({ id, abandoned: true }));
  const queued = new Set(
    (
      await queryRows<{ id: string }>(
        db,
        sql`SELECT data->>'taskRunId' AS id FROM ${sql.identifier(options.jobSchema)}.job
            WHERE name = ${options.jobQueue} AND state IN ('created', 'retry') AND data->>'taskRunId' IN (${sql.join(waiting.map((w) => sql`${w.id}`), sql`, `)})`,
      )
    ).map((r) => r.id),
  );
  return [...abandoned.map(({ id }) => ({ id, abandoned: true })), ...waiting.filter((w) => !queued.has(w.id)).map(({ id }) => ({ id, abandoned: false }))];
}

/** Notes that runs are being picked up after their worker stopped; the next saved step clears it. */
export async function markRecovered(db: Db, ids: string[]): Promise<void> {
  if (!ids.length) return;
  const now = new Date();
  const rows = await db.update(taskRuns).set({ recoveredAt: now }).where(and(inArray(taskRuns.id, ids), isNull(taskRuns.recoveredAt))).returning({ id: taskRuns.id, projectId: taskRuns.projectId, leaseOwner: taskRuns.leaseOwner });
  await appendAuditEntries(db, rows.map((r) => ({ projectId: r.projectId, entityType: 'task_run' as const, entityId: r.id, action: 'recovered', actor: 'system', oldValue: { leaseOwner: r.leaseOwner }, reason: 'its worker stopped before saving the next step; resuming from the last saved node' })));
}
