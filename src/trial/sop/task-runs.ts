import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../core/db/connect.js';
import { pendingActions, taskRuns, type TaskRunStatus } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { appendAudit } from '../store/audit.js';

export type TaskRun = typeof taskRuns.$inferSelect;

export interface StepRecord {
  node: string;
  type: string;
  at: string;
  outcome: 'pass' | 'fail' | 'error' | 'suspended' | 'approve' | 'reject' | 'notified' | 'notify_failed';
  next?: string;
  detail?: unknown;
}

export interface NewQuery {
  ruleId: string;
  /** The visit the finding belongs to, when the field names one (`v2_arm_1.visit_date`). */
  eventName?: string;
  field: string;
  message: string;
  severity: 'error' | 'warning' | 'info';
  value: unknown;
}

/**
 * Default time a worker owns a run between two saved steps (QC_LEASE_MS). An LLM step can take a minute; a
 * worker that has not saved a step for this long is taken for dead and another may continue the run.
 */
export const DEFAULT_LEASE_MS = 5 * 60 * 1000;

export async function getTaskRun(db: Db, id: string): Promise<TaskRun | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
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
  for (const row of rows) {
    await appendAudit(db, { projectId: input.projectId, entityType: 'task_run', entityId: row.id, action: 'created', actor: input.actor, newValue: { skillId: row.skillId, recordId: row.recordId, qcRunId: row.qcRunId } });
  }
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
 * Saves one executed node: its step, the queries it opened and the next node, in one transaction, and only
 * if this worker still owns the run at that node. Queries are deduplicated by (run, node, rule, field), so a
 * node executed again after a crash never raises a query twice.
 */
export async function commitStep(
  db: Db,
  run: TaskRun,
  workerId: string,
  step: StepRecord,
  update: { nextNode: string; status: TaskRunStatus; queries?: NewQuery[]; site?: string; onApprove?: string; onReject?: string; error?: string },
  leaseMs = DEFAULT_LEASE_MS,
): Promise<TaskRun | undefined> {
  return db.transaction(async (tx) => {
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
        error: update.error ?? null,
        leaseOwner: releases ? null : workerId,
        leaseUntil: releases ? null : new Date(now.getTime() + leaseMs),
        updatedAt: now,
        completedAt: terminal ? now : null,
      })
      .where(and(eq(taskRuns.id, run.id), eq(taskRuns.status, 'RUNNING'), eq(taskRuns.leaseOwner, workerId), eq(taskRuns.currentNode, step.node)))
      .returning();
    if (!saved) return undefined;
    if (update.queries?.length) {
      const opened = await tx
        .insert(pendingActions)
        .values(update.queries.map((q) => ({ projectId: run.projectId, taskRunId: run.id, recordId: run.recordId, eventName: q.eventName ?? run.eventName, site: update.site ?? '', nodeId: step.node, ruleId: q.ruleId, field: q.field, message: q.message, severity: q.severity, value: q.value ?? null })))
        .onConflictDoNothing()
        .returning({ id: pendingActions.id, field: pendingActions.field, message: pendingActions.message });
      for (const query of opened) {
        await appendAudit(tx as unknown as Db, { projectId: run.projectId, entityType: 'query', entityId: query.id, action: 'opened', actor: `sop:${run.skillId}`, newValue: { status: 'open', field: query.field, message: query.message, recordId: run.recordId } });
      }
    }
    // Every change of a run is in the audit trail: a node's outcome, and the run's status when it changes.
    await appendAudit(tx as unknown as Db, {
      projectId: run.projectId,
      entityType: 'task_run',
      entityId: run.id,
      action: update.status === 'RUNNING' ? `node:${step.node}:${step.outcome}` : update.status.toLowerCase(),
      actor: `sop:${run.skillId}`,
      oldValue: { status: 'RUNNING', node: step.node },
      newValue: { status: update.status, node: update.nextNode },
    });
    return saved;
  });
}

/**
 * A reviewer's decision on a suspended run. Only one decision can win: the UPDATE requires SUSPENDED, so a
 * second reviewer (or a double click) gets CONFLICT_STATE with the run's current state.
 */
export async function decideReview(db: Db, id: string, decision: 'approve' | 'reject', reviewer: string, comment: string): Promise<TaskRun> {
  return db.transaction(async (tx) => {
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
    await appendAudit(tx as unknown as Db, { projectId: row.projectId, entityType: 'task_run', entityId: id, action: decision === 'approve' ? 'review_approved' : 'review_rejected', actor: reviewer, oldValue: { status: 'SUSPENDED' }, newValue: { status: 'RUNNING', node: row.currentNode }, reason: comment });
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
export async function findOrphanedRuns(db: Db, options: { staleMs: number; jobQueue: string; jobSchema: string; now?: Date; limit?: number }): Promise<Array<{ id: string }>> {
  const now = options.now ?? new Date();
  const staleBefore = new Date(now.getTime() - options.staleMs);
  const candidates = await db
    .select({ id: taskRuns.id, status: taskRuns.status, leaseUntil: taskRuns.leaseUntil })
    .from(taskRuns)
    .where(and(inArray(taskRuns.status, ['PENDING', 'RUNNING']), or(isNull(taskRuns.leaseUntil), lt(taskRuns.leaseUntil, now)), lt(taskRuns.updatedAt, staleBefore)))
    .limit(options.limit ?? 500);
  const abandoned = candidates.filter((c) => c.status === 'RUNNING' && c.leaseUntil !== null);
  const waiting = candidates.filter((c) => !abandoned.includes(c));
  if (!waiting.length) return abandoned.map(({ id }) => ({ id }));
  const queued = new Set(
    (
      await queryRows<{ id: string }>(
        db,
        sql`SELECT data->>'taskRunId' AS id FROM ${sql.identifier(options.jobSchema)}.job
            WHERE name = ${options.jobQueue} AND state IN ('created', 'retry') AND data->>'taskRunId' IN (${sql.join(waiting.map((w) => sql`${w.id}`), sql`, `)})`,
      )
    ).map((r) => r.id),
  );
  return [...abandoned, ...waiting.filter((w) => !queued.has(w.id))].map(({ id }) => ({ id }));
}
