import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';
import { queryRows, type Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, taskRuns } from '../../core/db/schema/trial.js';
import type { RunStep } from '../../runtime/runs/run-shape.js';
import type { RunUpdate, StepCommit } from '../../runtime/runs/run-store.js';
import { isDecidedOnSameValues, type Finding } from './findings.js';
import { recordIdsByProject } from './record-context.js';
import { supersedeReviews, type TaskRun, type TaskRunStepWrites } from './task-runs.js';
import { takeOverOlderReviews } from './review-items.js';

type Step = StepCommit<TaskRun, TaskRunStepWrites>;
type PerRun = (tx: Db, run: TaskRun, step: RunStep, update: RunUpdate & TaskRunStepWrites) => Promise<AuditEntryInput[]>;

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_QUERY_STATUSES);

/**
 * The writes of a batch of QC steps (advanceTaskRuns) in a fixed number of statements, with the same outcome as
 * `perRun` (task-runs.ts commitRunWrites) step by step. Most records of a QC run need little: their findings are
 * new (one INSERT for all), already open with the same value (one UPDATE for all), or absent; runs that end let
 * their held queries go (one UPDATE for all). A step needing more (a query to close because it no longer fires, one
 * to reopen, a value that changed, a review to withdraw) or one that lost a race to another run is written by
 * `perRun`, as a single run's step is: there are few of those, and the lifecycle rules live in one place
 * (findings.ts).
 */
export async function commitBatchWrites(tx: Db, steps: readonly Step[], perRun: PerRun): Promise<AuditEntryInput[]> {
  const audit: AuditEntryInput[] = [];
  const checked = steps.filter((s) => s.update.checked);
  const slow = new Set<Step>();
  const fresh: Array<{ step: Step; finding: Finding }> = [];
  const seen: Array<{ step: Step; finding: Finding; queryId: string }> = [];
  if (checked.length) {
    const known = await queriesOfRecords(tx, checked);
    const softReviews = await softReviewsOfRecords(tx, checked);
    for (const step of checked) {
      const { run, update } = step;
      const fired = update.findings ?? [];
      const mine = known.get(recordKey(run.projectId, run.recordId)) ?? [];
      if (softReviews.has(`${recordKey(run.projectId, run.recordId)}\u0000${run.skillId}`) || hasStale(run, update, mine)) {
        slow.add(step);
        continue;
      }
      const plan: Array<{ finding: Finding; queryId?: string }> = [];
      for (const finding of fired) {
        const sameKey = mine.filter((q) => q.eventName === finding.eventName && q.ruleId === finding.ruleId && q.field === finding.field);
        const live = sameKey.find((q) => ACTIVE.has(q.status));
        // Decided by a person on these very values: nothing to write (findings.ts raiseOne does the same).
        if (!live && sameKey.length && isDecidedOnSameValues(latest(sameKey), finding)) continue;
        // A changed value is audited as firing again; a closed one is reopened: findings.ts does both.
        if (live ? live.noLongerFires !== null || JSON.stringify(live.value ?? null) !== JSON.stringify(finding.value ?? null) : sameKey.length > 0) {
          plan.length = 0;
          slow.add(step);
          break;
        }
        plan.push({ finding, queryId: live?.id });
      }
      if (slow.has(step)) continue;
      for (const { finding, queryId } of plan) {
        if (queryId) seen.push({ step, finding, queryId });
        else fresh.push({ step, finding });
      }
    }
    for (const lost of await touchLiveQueries(tx, seen)) slow.add(lost);
    const opened = await openQueries(tx, fresh);
    audit.push(...opened.audit);
    for (const lost of opened.lost) slow.add(lost);
  }
  // A step that could not be written set-wise is written as a single run's step, which settles what the set-wise
  // statements left alone (its other findings were written above and are found live, unchanged, so nothing twice).
  for (const step of [...slow].sort((a, b) => recordKey(a.run.projectId, a.run.recordId).localeCompare(recordKey(b.run.projectId, b.run.recordId)))) {
    audit.push(...(await perRun(tx, step.run, step.step, step.update)));
  }
  const ending = steps.filter((s) => !slow.has(s) && (s.update.status === 'COMPLETED' || s.update.status === 'FAILED'));
  audit.push(...(await releaseHeldQueries(tx, ending)));
  // A run written by perRun took over older reviews there; the others here. Cancels last: each writes its audit at once.
  const takeOver = await takeOverOlderReviews(tx, steps.filter((s) => !slow.has(s) && s.update.status === 'SUSPENDED').map((s) => s.run));
  audit.push(...takeOver.audit);
  await supersedeReviews(tx, takeOver.superseded);
  return audit;
}

interface KnownQuery {
  id: string;
  recordId: string;
  eventName: string;
  ruleId: string;
  field: string;
  status: string;
  value: unknown;
  noLongerFires: unknown;
  readFingerprint: string | null;
  updatedAt: Date;
  /** The skill of the run that last saw it fire: a query is closed only by a run of that skill. */
  skillId: string | null;
}

const recordKey = (projectId: string, recordId: string) => `${projectId}\u0000${recordId}`;

/** The query of a finding last closed or withdrawn (raiseOne reads the same one). */
const latest = (queries: readonly KnownQuery[]): KnownQuery => queries.reduce((a, b) => (b.updatedAt > a.updatedAt ? b : a));

/** Every query of the batch's records, live or not, with the skill that last saw it fire: one query per project. */
async function queriesOfRecords(tx: Db, steps: readonly Step[]): Promise<Map<string, KnownQuery[]>> {
  const out = new Map<string, KnownQuery[]>();
  for (const [projectId, recordIds] of recordIdsByProject(steps.map((s) => s.run))) {
    const rows = await tx
      .select({
        id: pendingActions.id, recordId: pendingActions.recordId, eventName: pendingActions.eventName, ruleId: pendingActions.ruleId, field: pendingActions.field,
        status: pendingActions.status, value: pendingActions.value, noLongerFires: pendingActions.noLongerFires, skillId: taskRuns.skillId,
        readFingerprint: pendingActions.readFingerprint, updatedAt: pendingActions.updatedAt,
      })
      .from(pendingActions)
      .leftJoin(taskRuns, eq(taskRuns.id, sql`coalesce(${pendingActions.lastTaskRunId}, ${pendingActions.taskRunId})`))
      .where(and(eq(pendingActions.projectId, projectId), inArray(pendingActions.recordId, recordIds)));
    for (const row of rows) {
      const key = recordKey(projectId, row.recordId);
      const list = out.get(key);
      if (list) list.push(row);
      else out.set(key, [row]);
    }
  }
  return out;
}

/** Records with a review waiting on a soft rule the model could not judge (which a passing check may end). */
async function softReviewsOfRecords(tx: Db, steps: readonly Step[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [projectId, recordIds] of recordIdsByProject(steps.map((s) => s.run))) {
    const rows = await tx
      .select({ recordId: taskRuns.recordId, skillId: taskRuns.skillId })
      .from(taskRuns)
      .where(and(eq(taskRuns.projectId, projectId), inArray(taskRuns.recordId, recordIds), eq(taskRuns.status, 'SUSPENDED'), sql`${taskRuns.reviewRequest}->>'kind' = 'soft_rule_unresolved'`));
    for (const row of rows) out.add(`${recordKey(projectId, row.recordId)}\u0000${row.skillId}`);
  }
  return out;
}

/** closeNoLongerFiring's test, on what was read: a live query of this skill whose rule ran and did not fire it, or whose rule is gone. */
function hasStale(run: TaskRun, update: RunUpdate & TaskRunStepWrites, queries: readonly KnownQuery[]): boolean {
  const checked = update.checked!;
  const fired = new Set((update.findings ?? []).map((f) => `${f.eventName}\u0000${f.ruleId}\u0000${f.field}`));
  const ran = new Set(checked.ruleIds);
  const inSkill = new Set(checked.skillRuleIds);
  return queries.some((q) => ACTIVE.has(q.status) && q.skillId === run.skillId && ((ran.has(q.ruleId) && !fired.has(`${q.eventName}\u0000${q.ruleId}\u0000${q.field}`)) || !inSkill.has(q.ruleId)));
}

/**
 * Live queries that fire again with the same value: each notes the run that saw it (raiseFindings does the same,
 * without an audit entry, as nothing about the query changed). Returns the steps whose query was no longer live.
 */
async function touchLiveQueries(tx: Db, seen: ReadonlyArray<{ step: Step; finding: Finding; queryId: string }>): Promise<Step[]> {
  if (!seen.length) return [];
  const values = seen.map(({ step, finding, queryId }) => ({ id: queryId, run: step.run.id, message: finding.message, fp: finding.readFingerprint ?? null }));
  // Locked first in the one order every writer of queries uses (record, then finding key): an UPDATE ... FROM
  // takes its rows in whatever order its plan reads them.
  await tx
    .select({ id: pendingActions.id })
    .from(pendingActions)
    .where(inArray(pendingActions.id, values.map((v) => v.id)))
    .orderBy(asc(pendingActions.projectId), asc(pendingActions.recordId), asc(pendingActions.eventName), asc(pendingActions.ruleId), asc(pendingActions.field))
    .for('update');
  const touched = await queryRows<{ id: string }>(tx, sql`
    UPDATE ${pendingActions} SET last_task_run_id = v.run, message = v.message, read_fingerprint = v.fp, updated_at = now()
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(id uuid, run uuid, message text, fp text)
    WHERE ${pendingActions.id} = v.id AND ${pendingActions.status} IN ('open', 'answered', 'reopened')
    RETURNING ${pendingActions.id} AS id`);
  const ok = new Set(touched.map((r) => r.id));
  return [...new Set(seen.filter((s) => !ok.has(s.queryId)).map((s) => s.step))];
}

/**
 * Findings never raised before: one INSERT for all, held by their run as raiseFindings holds them. A key another
 * run opened meanwhile is skipped by the unique index, and its step is returned to be written one by one.
 */
async function openQueries(tx: Db, fresh: ReadonlyArray<{ step: Step; finding: Finding }>): Promise<{ audit: AuditEntryInput[]; lost: Step[] }> {
  if (!fresh.length) return { audit: [], lost: [] };
  // One order for every writer, so two batches inserting the same keys wait for each other rather than deadlock.
  const sorted = [...fresh].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  const audit: AuditEntryInput[] = [];
  const opened = new Set<string>();
  // Well under PostgreSQL's 65 535 bind parameters (13 columns a row).
  for (let start = 0; start < sorted.length; start += 2000) {
    const chunk = sorted.slice(start, start + 2000);
    const rows = await tx
      .insert(pendingActions)
      .values(chunk.map(({ step: { run, step, update }, finding }) => ({
        projectId: run.projectId, taskRunId: run.id, lastTaskRunId: run.id, heldByTaskRunId: run.id, recordId: run.recordId, eventName: finding.eventName,
        site: update.site ?? '', nodeId: step.node, ruleId: finding.ruleId, field: finding.field, message: finding.message, severity: finding.severity, value: finding.value ?? null,
        readFingerprint: finding.readFingerprint ?? null,
      })))
      .onConflictDoNothing()
      .returning({ id: pendingActions.id, projectId: pendingActions.projectId, recordId: pendingActions.recordId, eventName: pendingActions.eventName, ruleId: pendingActions.ruleId, field: pendingActions.field, message: pendingActions.message, value: pendingActions.value, taskRunId: pendingActions.taskRunId });
    for (const row of rows) {
      opened.add(`${row.taskRunId}\u0000${row.eventName}\u0000${row.ruleId}\u0000${row.field}`);
      audit.push({
        projectId: row.projectId, entityType: 'query', entityId: row.id, action: 'opened', actor: `sop:${chunk[0]!.step.run.skillId}`, oldValue: null,
        newValue: { status: 'open', recordId: row.recordId, eventName: row.eventName, field: row.field, ruleId: row.ruleId, message: row.message, value: row.value ?? null },
      });
    }
  }
  const lost = sorted.filter(({ step, finding }) => !opened.has(`${step.run.id}\u0000${finding.eventName}\u0000${finding.ruleId}\u0000${finding.field}`)).map((f) => f.step);
  return { audit, lost: [...new Set(lost)] };
}

/** settleHeldQueries(release) for every run of the batch that ended: their queries go to the site. */
async function releaseHeldQueries(tx: Db, ending: readonly Step[]): Promise<AuditEntryInput[]> {
  if (!ending.length) return [];
  const runs = new Map(ending.map((s) => [s.run.id, s.run]));
  const held = and(inArray(pendingActions.heldByTaskRunId, [...runs.keys()]), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]));
  // Locked in the one order every writer of queries uses (record, then finding key), so batches do not deadlock.
  const rows = await tx
    .select({ id: pendingActions.id, heldBy: pendingActions.heldByTaskRunId, noLongerFires: pendingActions.noLongerFires })
    .from(pendingActions)
    .where(held)
    .orderBy(asc(pendingActions.projectId), asc(pendingActions.recordId), asc(pendingActions.eventName), asc(pendingActions.ruleId), asc(pendingActions.field))
    .for('update');
  if (!rows.length) return [];
  const heldBy = new Map(rows.map((r) => [r.id, r.heldBy!]));
  const now = new Date();
  // A held query marked as no longer firing never reaches the site (as in settleHeldQueries).
  const toWithdraw = rows.filter((r) => r.noLongerFires !== null).map((r) => r.id);
  const toRelease = rows.filter((r) => r.noLongerFires === null).map((r) => r.id);
  const withdrawn = toWithdraw.length ? await tx.update(pendingActions).set({ status: 'cancelled', heldByTaskRunId: null, updatedAt: now }).where(and(held, inArray(pendingActions.id, toWithdraw))).returning({ id: pendingActions.id }) : [];
  const released = toRelease.length ? await tx.update(pendingActions).set({ heldByTaskRunId: null, updatedAt: now }).where(and(held, inArray(pendingActions.id, toRelease))).returning({ id: pendingActions.id }) : [];
  const runOf = (id: string) => runs.get(heldBy.get(id)!)!;
  const entry = (id: string) => ({ projectId: runOf(id).projectId, entityType: 'query' as const, entityId: id, actor: `sop:${runOf(id).skillId}` });
  return [
    ...withdrawn.map(({ id }) => ({ ...entry(id), action: 'status:cancelled', newValue: { status: 'cancelled' }, reason: `task run ${heldBy.get(id)} ended; withdrawn before it reached the site: the finding no longer fires on the current data` })),
    ...released.map(({ id }) => ({ ...entry(id), action: 'released', reason: `task run ${heldBy.get(id)} ended` })),
  ];
}

function keyOf({ step, finding }: { step: Step; finding: Finding }): string {
  return `${step.run.projectId}\u0000${step.run.recordId}\u0000${finding.eventName}\u0000${finding.ruleId}\u0000${finding.field}`;
}
