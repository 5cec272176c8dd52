import { and, asc, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { skillAppliesTo } from '../sop/skill-catalog.js';
import type { Db } from '../../core/db/connect.js';
import { qcRuns, taskRuns, trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import { MODEL_UNAVAILABLE_STEP } from '../../runtime/runs/step-driver.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { Skill } from '../sop/load-skills.js';
import { createTaskRuns } from '../sop/task-runs.js';
import { appendAudit } from '../store/audit.js';
import { naturalRecordOrder } from '../store/record-order.js';
import { advanceTaskRunBatchQueue } from './queues.js';
import { withTransaction } from '../../core/db/transaction.js';

/**
 * Task runs per batch job: large enough that a job's fixed cost (fetch, lease, commit per node) is spread thin, small
 * enough that 10 000 records make 40 jobs for several workers to share and a retried job redoes little.
 */
const TASK_RUNS_PER_JOB = 250;

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

type QcRun = typeof qcRuns.$inferSelect;

/**
 * `waiting_review`: every run has been checked and some wait for a person; the batch completes when the last
 * review is decided. Derived when read, never stored, so it cannot disagree with the runs.
 */
export type QcRunStatus = QcRun['status'] | 'waiting_review';

export interface QcProgress {
  id: string;
  projectId: string;
  skillId: string;
  status: QcRunStatus;
  trigger: string;
  createdBy: string;
  createdAt: string;
  finishedAt: string | null;
  total: number;
  /** Runs whose work is over for now: completed, failed, waiting for review, or withdrawn (their review was about findings that no longer fire). */
  done: number;
  pending: number;
  running: number;
  suspended: number;
  completed: number;
  failed: number;
  /** Runs picked up again after their worker stopped, not yet past their next step. */
  recovering: number;
  /** Failed runs whose record was not checked: the model stayed unavailable through the run's outage budget. */
  notChecked: number;
  /** One sentence for a person when something needs saying (records not checked), else null. */
  summary: string | null;
}

/**
 * Starts a batch: one task run per record, created with the batch in one transaction, then one job each.
 * Concurrency is bounded by the number of workers on the advance queue, not by how many records there are.
 */
export async function startQcRun(
  deps: { db: Db; jobs: Jobs },
  input: { projectId: string; skill: Skill; recordIds?: string[]; actor: string; trigger?: 'manual' | 'cron' },
): Promise<QcProgress> {
  const { db, jobs } = deps;
  const { skill, projectId } = input;
  if (!skillAppliesTo(skill, projectId)) {
    // The projects it does apply to are not named: they may be trials the caller is not in.
    throw new ClinAgentError('VALIDATION_FAILED', `Skill "${skill.id}" does not apply to project "${projectId}". Choose one of the skills GET /api/iit/skills lists for this project.`, { field: 'skillId' });
  }
  const known = (await db.selectDistinct({ recordId: trialRecords.recordId }).from(trialRecords).where(eq(trialRecords.projectId, projectId)).orderBy(asc(trialRecords.recordId))).map((r) => r.recordId);
  let recordIds = known;
  if (input.recordIds?.length) {
    const knownIds = new Set(known);
    const unknown = input.recordIds.filter((id) => !knownIds.has(id));
    if (unknown.length) {
      // A list of 100 000 ids must not come back whole: the first ones name the mistake, the count its size.
      const more = unknown.length > 20 ? ` and ${unknown.length - 20} more` : '';
      throw new ClinAgentError('NOT_FOUND', `Unknown record id(s) in project "${projectId}": ${unknown.slice(0, 20).join(', ')}${more}. List the project's records with GET /api/iit/projects/${projectId}/records.`, { field: 'recordIds', unknown: unknown.slice(0, 50), unknownCount: unknown.length });
    }
    recordIds = [...new Set(input.recordIds)];
  }
  if (!recordIds.length) throw new ClinAgentError('VALIDATION_FAILED', `Project "${projectId}" has no records to check. Import data first.`, { projectId });

  const { run, taskRunIds } = await withTransaction(db, async (tx) => {
    const [created] = await tx.insert(qcRuns).values({ projectId, skillId: skill.id, status: 'running', total: recordIds.length, trigger: input.trigger ?? 'manual', createdBy: input.actor }).returning();
    const runs = await createTaskRuns(tx, { projectId, skillId: skill.id, skillVersion: skill.version, startNode: skill.startNode, qcRunId: created!.id, recordIds, actor: input.actor });
    await appendAudit(tx, { projectId, entityType: 'qc_run', entityId: created!.id, action: 'started', actor: input.actor, newValue: { status: 'running', skillId: skill.id, total: recordIds.length, trigger: input.trigger ?? 'manual' } });
    return { run: created!, taskRunIds: runs.map((r) => r.id) };
  });
  // Sent after commit; a crash in between leaves PENDING runs that the orphan sweep re-enqueues. Batches, so a
  // worker advances many runs per job and per statement (advanceTaskRuns); several workers share the batches.
  await jobs.sendMany(advanceTaskRunBatchQueue, chunk(taskRunIds, TASK_RUNS_PER_JOB).map((ids) => ({ taskRunIds: ids })));
  return (await getQcProgress(db, run.id))!;
}

async function countByStatus(db: Db, qcRunId: string) {
  const counts = await db
    .select({ status: taskRuns.status, n: sql<number>`count(*)::int` })
    .from(taskRuns)
    .where(eq(taskRuns.qcRunId, qcRunId))
    .groupBy(taskRuns.status);
  const by = (status: string) => Number(counts.find((c) => c.status === status)?.n ?? 0);
  const [recovering] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(taskRuns)
    .where(and(eq(taskRuns.qcRunId, qcRunId), inArray(taskRuns.status, ['PENDING', 'RUNNING']), isNotNull(taskRuns.recoveredAt)));
  // A run's last step says why it failed: the model unavailable on every attempt means its record was never checked.
  const [notChecked] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(taskRuns)
    .where(and(eq(taskRuns.qcRunId, qcRunId), eq(taskRuns.status, 'FAILED'), sql`${taskRuns.steps} -> -1 ->> 'type' = ${MODEL_UNAVAILABLE_STEP}`));
  return { pending: by('PENDING'), running: by('RUNNING'), suspended: by('SUSPENDED'), completed: by('COMPLETED'), failed: by('FAILED'), cancelled: by('CANCELLED'), recovering: Number(recovering?.n ?? 0), notChecked: Number(notChecked?.n ?? 0) };
}

/** Said plainly: records the model never judged are not "completed" checks. */
function summaryOf(progress: { notChecked: number }, total: number): string | null {
  if (!progress.notChecked) return null;
  return `${progress.notChecked} of ${total} records not checked because the model was unavailable. Run QC again for them once it is back.`;
}

export async function getQcProgress(db: Db, qcRunId: string): Promise<QcProgress | undefined> {
  if (!isUuid(qcRunId)) return undefined;
  const [run] = await db.select().from(qcRuns).where(eq(qcRuns.id, qcRunId));
  if (!run) return undefined;
  const { cancelled, ...progress } = await countByStatus(db, qcRunId);
  return {
    id: run.id,
    projectId: run.projectId,
    skillId: run.skillId,
    status: run.status === 'running' && progress.pending + progress.running === 0 && progress.suspended > 0 ? 'waiting_review' : run.status,
    trigger: run.trigger,
    createdBy: run.createdBy,
    createdAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
    total: run.total,
    done: progress.suspended + progress.completed + progress.failed + cancelled,
    ...progress,
    summary: summaryOf(progress, run.total),
  };
}

/**
 * Marks a batch completed once every run of it has ended: a batch with runs waiting for review is not
 * "completed" (it reads as waiting_review), and one with records the model never judged is failed, saying how
 * many. Called by the worker after each advance, resumes after a review included, so reading progress never writes.
 */
export async function completeQcRunIfDone(db: Db, qcRunId: string): Promise<void> {
  const progress = await countByStatus(db, qcRunId);
  if (progress.pending + progress.running + progress.suspended > 0) return;
  // The status change and its audit entry commit together: a crash between them would leave a completed run
  // whose completion the trail never recorded (the conditional UPDATE would not fire a second time).
  await withTransaction(db, async (tx) => {
    const status = progress.notChecked ? 'failed' : 'completed';
    const [updated] = await tx.update(qcRuns).set({ status, finishedAt: new Date() }).where(and(eq(qcRuns.id, qcRunId), eq(qcRuns.status, 'running'))).returning();
    if (updated) {
      await appendAudit(tx, { projectId: updated.projectId, entityType: 'qc_run', entityId: updated.id, action: status, actor: 'system', oldValue: { status: 'running' }, newValue: { status, ...progress, total: updated.total, summary: summaryOf(progress, updated.total) } });
    }
  });
}

export async function listQcRuns(db: Db, projectId: string, limit = 50): Promise<QcProgress[]> {
  const runs = await db.select({ id: qcRuns.id }).from(qcRuns).where(eq(qcRuns.projectId, projectId)).orderBy(desc(qcRuns.createdAt)).limit(limit);
  const out: QcProgress[] = [];
  for (const run of runs) out.push((await getQcProgress(db, run.id))!);
  return out;
}

const TASK_RUN_PAGE_SIZE = 50;
const TASK_RUN_PAGE_SIZE_MAX = 500;

export interface TaskRunPageRequest {
  projectId: string;
  qcRunId?: string;
  statuses?: string[];
  /** 1-based; default 1. */
  page?: number;
  /** Default TASK_RUN_PAGE_SIZE. */
  pageSize?: number;
}

/**
 * One page of a project's task runs with the total, as the query list is paged (queries/query-page.ts): any run of
 * any size of queue is reachable, none is cut off silently. The review queue (SUSPENDED) reads oldest first, so no
 * record waits behind newer ones; other lists newest first. The id breaks ties, so every run is on exactly one page.
 */
export async function pageTaskRuns(db: Db, request: TaskRunPageRequest): Promise<{ taskRuns: Array<typeof taskRuns.$inferSelect>; total: number; page: number; pageSize: number }> {
  const { page = 1, pageSize = TASK_RUN_PAGE_SIZE } = request;
  if (!Number.isSafeInteger(page) || page < 1) throw new ClinAgentError('VALIDATION_FAILED', `page must be a whole number of 1 or more (the first page is 1); got ${page}.`, { field: 'page' });
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > TASK_RUN_PAGE_SIZE_MAX) {
    throw new ClinAgentError('VALIDATION_FAILED', `pageSize must be a whole number from 1 to ${TASK_RUN_PAGE_SIZE_MAX}; got ${pageSize}.`, { field: 'pageSize' });
  }
  // A malformed run id matches no run; compared with the uuid column it would make PostgreSQL throw.
  if (request.qcRunId !== undefined && !isUuid(request.qcRunId)) return { taskRuns: [], total: 0, page, pageSize };
  const where = and(eq(taskRuns.projectId, request.projectId), request.qcRunId ? eq(taskRuns.qcRunId, request.qcRunId) : undefined, request.statuses?.length ? inArray(taskRuns.status, request.statuses as never[]) : undefined);
  const isQueue = request.statuses?.length === 1 && request.statuses[0] === 'SUSPENDED';
  const direction = isQueue ? asc : desc;
  const [rows, [counted]] = await Promise.all([
    // Runs of one batch share their timestamp: the record id orders them as a reviewer reads a list (2 before 10).
    db.select().from(taskRuns).where(where).orderBy(direction(taskRuns.updatedAt), ...naturalRecordOrder(taskRuns.recordId), direction(taskRuns.id)).limit(pageSize).offset((page - 1) * pageSize),
    db.select({ n: sql<number>`count(*)::int` }).from(taskRuns).where(where),
  ]);
  return { taskRuns: rows, total: Number(counted?.n ?? 0), page, pageSize };
}

export async function listTaskRuns(db: Db, filter: { projectId: string; qcRunId?: string; statuses?: string[]; limit?: number }) {
  // A malformed run id matches no run; compared with the uuid column it would make PostgreSQL throw.
  if (filter.qcRunId !== undefined && !isUuid(filter.qcRunId)) return [];
  return db
    .select()
    .from(taskRuns)
    .where(and(eq(taskRuns.projectId, filter.projectId), filter.qcRunId ? eq(taskRuns.qcRunId, filter.qcRunId) : undefined, filter.statuses?.length ? inArray(taskRuns.status, filter.statuses as never[]) : undefined))
    .orderBy(desc(taskRuns.updatedAt))
    .limit(Math.min(filter.limit ?? 200, 1000));
}
