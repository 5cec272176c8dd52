import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { and, eq, getTableColumns, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { appendAuditEntries, type AuditEntityType, type AuditEntryInput } from '../../core/audit/audit-log.js';
import { queryRows, type Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { QueueDef } from '../../core/jobs/queues.js';
import { findOrphans, markRecovered, type Orphan } from './orphans.js';
import type { RunReviewRequest, RunRow, RunShape, RunStatus, RunStep, RunTable } from './run-shape.js';
import { withTransaction } from '../../core/db/transaction.js';

/**
 * Default time a worker owns a run without renewing it. The worker renews the lease every third of it while a
 * step runs (an LLM step can take minutes), so only a dead worker lets it lapse; with the orphan sweep this puts
 * a run left by a killed worker back to work within about 30 s.
 */
export const DEFAULT_LEASE_MS = 15_000;


/** Tries of a batch commit the server rolled back as a deadlock victim (commitSteps). */
const DEADLOCK_ATTEMPTS = 5;

/** PostgreSQL's deadlock_detected, as node-postgres reports it (drizzle wraps it as the cause). */
function isDeadlock(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === '40P01') return true;
  }
  return false;
}

/** What one committed step does to the run row. */
export interface RunUpdate {
  nextNode: string;
  status: RunStatus;
  /** Where a suspended run goes on approve (or, waiting for an answer, with the answer) and on reject. */
  onApprove?: string;
  onReject?: string;
  reviewRequest?: RunReviewRequest;
  error?: string;
}

export type Decision = (
  | { kind: 'approve' | 'reject'; actor: string; comment?: string }
  | { kind: 'answer'; actor: string; answer: string; comment?: string }
) & {
  /**
   * The `reviewRequest.dataHash` of the run as the person was shown it. When given, a decision on a run that has
   * since been re-done and asks again (about other data) is refused rather than applied to data nobody saw.
   */
  shownDataHash?: string;
};

/** A queue whose jobs each list runs to advance together (payload field `key` holds their ids). */
export interface BatchQueue {
  queue: QueueDef<never>;
  key: string;
}

/** One executed node of one run, as commitSteps saves it with others. */
export interface StepCommit<Row, Extra = object> {
  run: Row;
  step: RunStep;
  update: RunUpdate & Extra;
}

/** What happened to a run, for the audit hook to name. */
export type RunAuditEvent =
  | { type: 'step'; step: RunStep; status: RunStatus }
  | { type: 'decision'; kind: Decision['kind'] }
  | { type: 'recovered' }
  | { type: 'cancelled' };

const DEFAULT_AUDIT_ACTION = (event: RunAuditEvent): string => {
  switch (event.type) {
    case 'step': return event.status === 'RUNNING' ? `node:${event.step.node}:${event.step.outcome}` : event.status.toLowerCase();
    case 'decision': return event.kind === 'approve' ? 'review_approved' : event.kind === 'reject' ? 'review_rejected' : 'answered';
    default: return event.type;
  }
};

export const isTerminalStatus = (status: RunStatus): boolean => status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELLED';

/** Everything a user of the store adds; the store itself knows runs, leases and reviews, nothing of trials. */
export interface RunStoreHooks<Row, Extra, DecisionExtra> {
  /** How runs are named in messages: "Task run", "Consult". */
  label: string;
  /** The key naming the run in error details ("taskRunId"); default "runId". */
  idName?: string;
  /**
   * The user's own writes for a step (a trial's findings and queries), in the step's transaction after the run
   * row is locked. Returns audit entries, which the store writes last (the audit chain's lock comes last).
   */
  onCommit?(tx: Db, run: Row, step: RunStep, update: RunUpdate & Extra): Promise<AuditEntryInput[]>;
  /**
   * The same writes for the steps of many runs committed together (commitSteps), in as few statements as the
   * user can manage; absent: onCommit runs for each step in turn.
   */
  onCommitMany?(tx: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>): Promise<AuditEntryInput[]>;
  /** What a decision does besides moving the run on (a trial settles the queries its review held back). */
  onDecision?(tx: Db, run: Row, decision: Decision & DecisionExtra): Promise<AuditEntryInput[]>;
  /**
   * What a person waiting on this run is shown, as a string that changes whenever that data changes (a record's
   * versions). Its hash is saved when the run suspends; a decision made when it no longer matches is refused.
   */
  reviewFingerprint?(tx: Db, run: Row): Promise<string>;
  /** reviewFingerprint of many runs at once (by run id), for commitSteps; absent: one call per run. */
  reviewFingerprints?(tx: Db, runs: readonly Row[]): Promise<Map<string, string>>;
  /** Names the reviewed data in the refusal ("record S2"). */
  describeReviewedData?(run: Row): string;
  /**
   * The node to run again from when the data a person was asked about changed before their decision (a trial run
   * re-checks the record from its first node). Absent: the run keeps waiting, now for a decision on the new data.
   * A run that re-does its work never acts on what the person was shown: a finding that no longer holds is gone.
   */
  redoFrom?(run: Row): string | undefined;
  /** Audit of the run's own changes; absent: this table's runs are not audited. */
  audit?: {
    entityType: AuditEntityType;
    projectId(run: Row): string | null;
    actor(run: Row): string;
    /**
     * The action an event is audited as; undefined leaves the event out. Default: every saved node
     * (`node:<id>:<outcome>`), each status change by its name, `review_approved` / `review_rejected` / `answered`.
     */
    action?(event: RunAuditEvent): string | undefined;
  };
  /** The rows of a shared table this store sees (agent_runs of one kind): get, lease, decide and sweep only those. */
  scope?: SQL;
  /** Columns of the user's own saved with the step's run row (an agent's checkpoint `state`), by Drizzle name. */
  columns?(update: RunUpdate & Extra): Partial<Row>;
}

/**
 * A durable run store over any table with the run columns (task_runs, agent_runs): the lease that gives one
 * worker a run at a time, the per-step checkpoint, suspension for a person, the decision that resumes it, and
 * the sweep that finds runs nobody advances. A run resumes from its saved node and never replays history.
 */
export type RunStore<Row, Extra = object, DecisionExtra = object> = {
  get(db: Db, id: string): Promise<Row | undefined>;
  acquireLease(db: Db, id: string, owner: string, leaseMs?: number, now?: Date): Promise<Row | undefined>;
  keepLease(db: Db, id: string, owner: string, leaseMs?: number): { stop(): void };
  releaseLease(db: Db, id: string, owner: string): Promise<void>;
  commitStep(db: Db, run: Row, owner: string, step: RunStep, update: RunUpdate & Extra, leaseMs?: number): Promise<Row | undefined>;
  acquireLeases(db: Db, ids: readonly string[], owner: string, leaseMs?: number, now?: Date): Promise<Row[]>;
  keepLeases(db: Db, ids: () => readonly string[], owner: string, leaseMs?: number): { stop(): void };
  releaseLeases(db: Db, ids: readonly string[], owner: string): Promise<void>;
  commitSteps(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs?: number): Promise<Row[]>;
  decide(db: Db, id: string, decision: Decision & DecisionExtra): Promise<Row>;
  cancel(db: Db, id: string, actor: string, reason?: string): Promise<Row>;
  sweepOrphans<Q extends Record<K, string>, K extends keyof Q & string>(db: Db, options: { jobs: Jobs; queue: QueueDef<Q>; key: K; batch?: BatchQueue; staleMs: number; now?: Date; limit?: number }): Promise<Orphan[]>;
};

export function createRunStore<T extends RunTable, Extra = object, DecisionExtra = object>(table: T, hooks: RunStoreHooks<T['$inferSelect'], Extra, DecisionExtra>) {
  type Row = T['$inferSelect'];
  // Typed as the run columns; at run time the caller's table, so every query names its own table and columns.
  const t = table as unknown as RunShape;
  const asRow = (row: RunRow): Row => row as unknown as Row;
  const core = (row: Row): RunRow => row as unknown as RunRow;
  const idName = hooks.idName ?? 'runId';

  function auditOf(run: Row, event: RunAuditEvent, entry: Omit<AuditEntryInput, 'projectId' | 'entityType' | 'entityId' | 'actor' | 'action'> & { actor?: string; action?: string }): AuditEntryInput[] {
    const projectId = hooks.audit?.projectId(run);
    if (!hooks.audit || !projectId) return [];
    const action = entry.action ?? (hooks.audit.action ?? DEFAULT_AUDIT_ACTION)(event);
    if (!action) return [];
    return [{ ...entry, action, projectId, entityType: hooks.audit.entityType, entityId: core(run).id, actor: entry.actor ?? hooks.audit.actor(run) }];
  }

  const recoveredAudit = (run: RunRow) => auditOf(asRow(run), { type: 'recovered' }, { actor: 'system', oldValue: { leaseOwner: run.leaseOwner }, reason: 'its worker stopped before saving the next step; resuming from the last saved node',
  });

  async function fingerprintHash(tx: Db, run: Row): Promise<string | undefined> {
    if (!hooks.reviewFingerprint) return undefined;
    return createHash('sha256').update(await hooks.reviewFingerprint(tx, run)).digest('hex');
  }

  async function get(db: Db, id: string): Promise<Row | undefined> {
    if (!isUuid(id)) return undefined;
    const [row] = await db.select().from(t).where(and(eq(t.id, id), hooks.scope));
    return row && asRow(row);
  }

  /**
   * Takes the run for `owner` (one owner per advance) when it is pending, or running with no live owner. The single
   * conditional UPDATE is what makes two workers (or a retried job) never advance the same run at once.
   */
  async function acquireLease(db: Db, id: string, owner: string, leaseMs = DEFAULT_LEASE_MS, now = new Date()): Promise<Row | undefined> {
    const [row] = await db
      .update(t)
      .set({ status: 'RUNNING', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
      .where(and(eq(t.id, id), hooks.scope, or(eq(t.status, 'PENDING'), and(eq(t.status, 'RUNNING'), or(isNull(t.leaseUntil), lt(t.leaseUntil, now))))))
      .returning();
    return row && asRow(row);
  }

  /** Extends the lease of a run `owner` holds while a long step runs; false when the run is no longer its. */
  async function renewLease(db: Db, id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
    const now = new Date();
    const [row] = await db
      .update(t)
      .set({ leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
      .where(and(eq(t.id, id), eq(t.status, 'RUNNING'), eq(t.leaseOwner, owner)))
      .returning({ id: t.id });
    return Boolean(row);
  }

  /** Renews the lease every third of its length until stopped, so only a worker that died lets it lapse. */
  function keepLease(db: Db, id: string, owner: string, leaseMs = DEFAULT_LEASE_MS): { stop(): void } {
    const timer = setInterval(() => void renewLease(db, id, owner, leaseMs).catch(() => undefined), Math.max(250, Math.floor(leaseMs / 3)));
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /** Gives the run up without saving a step (the model is rate limited), so a retry can take it at once. */
  async function releaseLease(db: Db, id: string, owner: string): Promise<void> {
    await db.update(t).set({ leaseOwner: null, leaseUntil: null, updatedAt: new Date() }).where(and(eq(t.id, id), eq(t.leaseOwner, owner)));
  }

  /**
   * Saves one executed node: its step, the user's writes (onCommit) and the next node, in one transaction, and only
   * if `owner` still holds the run at that node; undefined otherwise (another worker took it over). A run that
   * suspends saves the hash of what its reviewer will be shown, taken after this step's own writes.
   */
  async function commitStep(db: Db, run: Row, owner: string, step: RunStep, update: RunUpdate & Extra, leaseMs = DEFAULT_LEASE_MS): Promise<Row | undefined> {
    return withTransaction(db, async (tx) => {
      const now = new Date();
      const terminal = isTerminalStatus(update.status);
      // A run put back to PENDING (waiting out a model outage) is no one's until its next job takes it.
      const releases = terminal || update.status === 'SUSPENDED' || update.status === 'PENDING';
      const [saved] = await tx
        .update(t)
        .set({
          status: update.status,
          currentNode: update.nextNode,
          steps: sql`${t.steps} || ${JSON.stringify([step])}::jsonb`,
          onApprove: update.onApprove ?? null,
          onReject: update.onReject ?? null,
          reviewRequest: update.reviewRequest ?? null,
          error: update.error ?? null,
          leaseOwner: releases ? null : owner,
          leaseUntil: releases ? null : new Date(now.getTime() + leaseMs),
          recoveredAt: null,
          updatedAt: now,
          completedAt: terminal ? now : null,
          ...(hooks.columns?.(update) as object | undefined),
        })
        .where(and(eq(t.id, core(run).id), eq(t.status, 'RUNNING'), eq(t.leaseOwner, owner), eq(t.currentNode, step.node)))
        .returning();
      if (!saved) return undefined;
      let result = asRow(saved);
      const audit = [...((await hooks.onCommit?.(tx, result, step, update)) ?? [])];
      const dataHash = update.status === 'SUSPENDED' ? await fingerprintHash(tx, result) : undefined;
      if (dataHash) {
        const [withHash] = await tx.update(t).set({ reviewRequest: { ...update.reviewRequest, dataHash } }).where(eq(t.id, saved.id)).returning();
        result = asRow(withHash!);
      }
      // Every change of a run is in the audit trail: a node's outcome, and the run's status when it changes.
      audit.push(...auditOf(result, { type: 'step', step, status: update.status }, {
        oldValue: { status: 'RUNNING', node: step.node },
        newValue: { status: update.status, node: update.nextNode },
      }));
      await appendAuditEntries(tx, audit);
      return result;
    });
  }

  /** acquireLease for many runs in one statement: the runs of `ids` this owner now holds. */
  async function acquireLeases(db: Db, ids: readonly string[], owner: string, leaseMs = DEFAULT_LEASE_MS, now = new Date()): Promise<Row[]> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return [];
    const rows = await db
      .update(t)
      .set({ status: 'RUNNING', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now })
      .where(and(inArray(t.id, valid), hooks.scope, or(eq(t.status, 'PENDING'), and(eq(t.status, 'RUNNING'), or(isNull(t.leaseUntil), lt(t.leaseUntil, now))))))
      .returning();
    return rows.map(asRow);
  }

  /** keepLease for the runs `ids()` names at each renewal (a batch's runs still at work). */
  function keepLeases(db: Db, ids: () => readonly string[], owner: string, leaseMs = DEFAULT_LEASE_MS): { stop(): void } {
    const renew = async () => {
      const current = ids();
      if (!current.length) return;
      const now = new Date();
      await db.update(t).set({ leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now }).where(and(inArray(t.id, [...current]), eq(t.status, 'RUNNING'), eq(t.leaseOwner, owner)));
    };
    const timer = setInterval(() => void renew().catch(() => undefined), Math.max(250, Math.floor(leaseMs / 3)));
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  async function releaseLeases(db: Db, ids: readonly string[], owner: string): Promise<void> {
    if (!ids.length) return;
    await db.update(t).set({ leaseOwner: null, leaseUntil: null, updatedAt: new Date() }).where(and(inArray(t.id, [...ids]), eq(t.leaseOwner, owner)));
  }

  /**
   * commitStep for the steps of many runs, in one transaction of a fixed number of statements: the run rows in one
   * UPDATE, the user's writes (onCommitMany), the review hashes of the runs that suspend, then every audit entry.
   * As with commitStep, only steps of runs `owner` still holds at that node are saved; the rows saved are returned.
   * A crash before the commit saves none of them, and each run continues from its last saved node.
   */
  async function commitSteps(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<Row[]> {
    if (!steps.length) return [];
    if (hooks.columns) throw new ClinAgentError('INTERNAL', `${hooks.label}s keep columns of their own with each step; commit them one by one (commitStep).`, {});
    // Two batches writing the same rows (two QC runs over one trial at once) can deadlock on PostgreSQL; the one
    // the server rolls back has written nothing, so its commit is simply tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await commitStepsOnce(db, steps, owner, leaseMs);
      } catch (error) {
        if (attempt >= DEADLOCK_ATTEMPTS || !isDeadlock(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * attempt));
      }
    }
  }

  async function commitStepsOnce(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs: number): Promise<Row[]> {
    return withTransaction(db, async (tx) => {
      const now = new Date();
      const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
      const values = steps.map(({ run, step, update }) => {
        const terminal = isTerminalStatus(update.status);
        return {
          id: core(run).id, node: step.node, status: update.status, current_node: update.nextNode, step: [step], on_approve: update.onApprove ?? null, on_reject: update.onReject ?? null,
          review_request: update.reviewRequest ?? null, error: update.error ?? null, releases: terminal || update.status === 'SUSPENDED', terminal,
        };
      });
      const column = (c: { name: string }) => sql.identifier(c.name);
      // One statement for every run row, from a JSON list of their values; the WHERE is commitStep's, per row.
      const updated = await queryRows<Record<string, unknown>>(tx, sql`
        UPDATE ${table} SET
          ${column(t.status)} = v.status, ${column(t.currentNode)} = v.current_node, ${column(t.steps)} = ${t.steps} || v.step,
          ${column(t.onApprove)} = v.on_approve, ${column(t.onReject)} = v.on_reject, ${column(t.reviewRequest)} = v.review_request, ${column(t.error)} = v.error,
          ${column(t.leaseOwner)} = CASE WHEN v.releases THEN NULL ELSE ${owner} END,
          ${column(t.leaseUntil)} = CASE WHEN v.releases THEN NULL ELSE ${leaseUntil}::timestamptz END,
          ${column(t.recoveredAt)} = NULL, ${column(t.updatedAt)} = ${now.toISOString()}::timestamptz,
          ${column(t.completedAt)} = CASE WHEN v.terminal THEN ${now.toISOString()}::timestamptz ELSE NULL END
        FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(id uuid, node text, status text, current_node text, step jsonb, on_approve text, on_reject text, review_request jsonb, error text, releases boolean, terminal boolean)
        WHERE ${t.id} = v.id AND ${t.status} = 'RUNNING' AND ${t.leaseOwner} = ${owner} AND ${t.currentNode} = v.node ${hooks.scope ? sql`AND ${hooks.scope}` : sql``}
        RETURNING ${table}.*`);
      if (!updated.length) return [];
      const rows = new Map(updated.map((raw) => fromDriverRow(raw)).map((row) => [core(row).id, row]));
      const savedIds = new Set(rows.keys());
      const saved = steps.filter(({ run }) => savedIds.has(core(run).id)).map((s) => ({ ...s, run: rows.get(core(s.run).id)! }));
      const audit: AuditEntryInput[] = [];
      // Turns of the event loop between the statements of a batch: on the embedded database each runs on this thread.
      await yieldToEventLoop();
      if (hooks.onCommitMany) audit.push(...(await hooks.onCommitMany(tx, saved)));
      else if (hooks.onCommit) for (const s of saved) audit.push(...(await hooks.onCommit(tx, s.run, s.step, s.update)));
      await yieldToEventLoop();
      await saveReviewHashes(tx, saved.filter((s) => s.update.status === 'SUSPENDED'));
      for (const { run, step, update } of saved) {
        audit.push(...auditOf(run, { type: 'step', step, status: update.status }, { oldValue: { status: 'RUNNING', node: step.node }, newValue: { status: update.status, node: update.nextNode } }));
      }
      await yieldToEventLoop();
      await appendAuditEntries(tx, audit);
      return saved.map((s) => s.run);
    });
  }

  /** A row as the database returned it (column names, driver values) as Drizzle's select would give it. */
  function fromDriverRow(raw: Record<string, unknown>): Row {
    const row: Record<string, unknown> = {};
    for (const [key, column] of Object.entries(getTableColumns(table))) {
      const value = raw[column.name];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return row as Row;
  }

  /** The review hash of each run that suspends in commitSteps, taken after the steps' own writes, as commitStep does. */
  async function saveReviewHashes(tx: Db, suspended: Array<StepCommit<Row, Extra>>): Promise<void> {
    if (!suspended.length || (!hooks.reviewFingerprint && !hooks.reviewFingerprints)) return;
    const runs = suspended.map((s) => s.run);
    const fingerprints = hooks.reviewFingerprints ? await hooks.reviewFingerprints(tx, runs) : new Map(await Promise.all(runs.map(async (run) => [core(run).id, await hooks.reviewFingerprint!(tx, run)] as const)));
    const hashes = runs.map((run) => ({ id: core(run).id, hash: createHash('sha256').update(fingerprints.get(core(run).id) ?? '').digest('hex') }));
    await tx.execute(sql`
      UPDATE ${table} SET ${sql.identifier(t.reviewRequest.name)} = coalesce(${t.reviewRequest}, '{}'::jsonb) || jsonb_build_object('dataHash', v.hash)
      FROM jsonb_to_recordset(${JSON.stringify(hashes)}::jsonb) AS v(id uuid, hash text) WHERE ${t.id} = v.id`);
    const byId = new Map(hashes.map((h) => [h.id, h.hash]));
    for (const run of runs) {
      const row = core(run);
      row.reviewRequest = { ...(row.reviewRequest ?? {}), dataHash: byId.get(row.id) } as RunRow['reviewRequest'];
    }
  }

  /**
   * A person's decision on a suspended run: approve or reject, or the answer it waits for. Only one decision wins:
   * the run row is locked and must be SUSPENDED, so a second reviewer (or a double click) gets CONFLICT_STATE with
   * the run's current state. A decision on data that changed since the run suspended is refused with
   * CONFLICT_STATE too, and the run waits again, now for a review of the current data.
   */
  async function decide(db: Db, id: string, decision: Decision & DecisionExtra): Promise<Row> {
    assertDecision(decision);
    if (!isUuid(id)) throw new ClinAgentError('NOT_FOUND', `${hooks.label} "${id}" does not exist. Check the id.`, { [idName]: id });
    const outcome = await withTransaction(db, async (tx) => {
      const now = new Date();
      const [current] = await tx.select().from(t).where(and(eq(t.id, id), hooks.scope)).for('update');
      if (!current) throw new ClinAgentError('NOT_FOUND', `${hooks.label} "${id}" does not exist. Check the id.`, { [idName]: id });
      if (current.status !== 'SUSPENDED') {
        throw new ClinAgentError('CONFLICT_STATE', `${hooks.label} ${id} is ${current.status} (at ${current.currentNode}), not waiting for review; someone may have decided already. Reload to see its state.`, { [idName]: id, status: current.status, currentNode: current.currentNode });
      }
      const awaitsAnswer = current.reviewRequest?.awaiting === 'answer';
      if (current.reviewRequest?.awaiting !== 'input' && awaitsAnswer !== (decision.kind === 'answer')) {
        throw new ClinAgentError('VALIDATION_FAILED', awaitsAnswer
          ? `${hooks.label} ${id} waits for an answer, not for approve or reject. Send the answer text.`
          : `${hooks.label} ${id} waits for approve or reject, not for an answer.`, { field: 'decision', [idName]: id });
      }
      const shownHash = current.reviewRequest?.dataHash;
      const currentHash = shownHash ? await fingerprintHash(tx, asRow(current)) : undefined;
      if (shownHash && currentHash && currentHash !== shownHash) {
        const refused = { refused: decision.kind, by: decision.actor, reason: 'the data shown for review changed' };
        const redoNode = hooks.redoFrom?.(asRow(current));
        // Not lost and not decided: the run does its work again on the data as it is and asks again if it still
        // needs a person, or it waits again for a decision on the current data.
        const [refreshed] = await tx
          .update(t)
          .set(redoNode
            ? {
                status: 'RUNNING', currentNode: redoNode, reviewRequest: null, onApprove: null, onReject: null, leaseOwner: null, leaseUntil: null,
                steps: sql`${t.steps} || ${JSON.stringify([{ node: current.currentNode, type: 'review', at: now.toISOString(), outcome: 'redo', next: redoNode, detail: refused }])}::jsonb`,
                updatedAt: now,
              }
            : {
                reviewRequest: { ...current.reviewRequest, dataHash: currentHash, dataChangedAt: now.toISOString() },
                steps: sql`${t.steps} || ${JSON.stringify([{ node: current.currentNode, type: 'review', at: now.toISOString(), outcome: 'refreshed', detail: refused }])}::jsonb`,
                updatedAt: now,
              })
          .where(eq(t.id, id))
          .returning();
        const run = asRow(refreshed!);
        await appendAuditEntries(tx, auditOf(run, { type: 'decision', kind: decision.kind }, redoNode
          ? {
              action: 'review_redone', actor: decision.actor, oldValue: { status: 'SUSPENDED', node: current.currentNode, dataHash: shownHash }, newValue: { status: 'RUNNING', node: redoNode },
              reason: `${decision.kind} refused: the data shown for review changed before the decision; the run checks the current data again`,
            }
          : {
              action: 'review_refreshed', actor: decision.actor, oldValue: { dataHash: shownHash }, newValue: { dataHash: currentHash },
              reason: `${decision.kind} refused: the data shown for review changed before the decision; waiting for a fresh review`,
            }));
        return { stale: true as const, redo: Boolean(redoNode), run };
      }
      if (decision.shownDataHash !== undefined && decision.shownDataHash !== shownHash) {
        throw new ClinAgentError(
          'CONFLICT_STATE',
          `${hooks.label} ${id} now asks about other data than the version you decided on (it was checked again after a change). Reload it, check what it shows now and decide again.`,
          { [idName]: id, status: 'SUSPENDED', reason: 'review_data_changed' },
        );
      }
      const [row] = await tx
        .update(t)
        .set({
          status: 'RUNNING',
          currentNode: decision.kind === 'approve' ? sql`coalesce(${t.onApprove}, 'end_approved')` : decision.kind === 'reject' ? sql`coalesce(${t.onReject}, 'end_rejected')` : sql`coalesce(${t.onApprove}, ${t.currentNode})`,
          review: { reviewer: decision.actor, decision: decision.kind, comment: decision.comment ?? '', ...(decision.kind === 'answer' ? { answer: decision.answer } : {}), decidedAt: now.toISOString() },
          steps: sql`${t.steps} || ${JSON.stringify([{ node: 'review', type: 'human_review', at: now.toISOString(), outcome: decision.kind, detail: { reviewer: decision.actor, comment: decision.comment ?? '' } }])}::jsonb`,
          leaseOwner: null,
          leaseUntil: null,
          updatedAt: now,
        })
        .where(and(eq(t.id, id), eq(t.status, 'SUSPENDED')))
        .returning();
      const run = asRow(row!);
      const audit = [...((await hooks.onDecision?.(tx, run, decision)) ?? [])];
      audit.push(...auditOf(run, { type: 'decision', kind: decision.kind }, {
        actor: decision.actor, oldValue: { status: 'SUSPENDED' }, newValue: { status: 'RUNNING', node: row!.currentNode }, reason: decision.comment ?? '',
      }));
      await appendAuditEntries(tx, audit);
      return { stale: false as const, run };
    });
    if (outcome.stale) {
      const what = hooks.describeReviewedData?.(outcome.run) ?? 'the data shown for review';
      const next = outcome.redo
        ? 'The run is checking the current data again and will ask for a review again only if its findings still hold; reload it in a moment.'
        : 'The run is waiting for a fresh review: reload it, check the current data and decide again.';
      throw new ClinAgentError(
        'CONFLICT_STATE',
        `${hooks.label} ${id}: ${what} changed after the review was shown (for example, it was imported again), so the ${decision.kind} was not applied. ${next}`,
        { [idName]: id, status: outcome.redo ? 'RUNNING' : 'SUSPENDED', reason: 'review_data_changed', redo: outcome.redo },
      );
    }
    return outcome.run;
  }

  /**
   * Stops a run that has not ended: CANCELLED, lease and review cleared, in one conditional UPDATE, so a worker
   * in the middle of a step finds the run no longer its when it commits and stops without saving. Refused with
   * CONFLICT_STATE (and the run's state) when it has already ended.
   */
  async function cancel(db: Db, id: string, actor: string, reason = ''): Promise<Row> {
    if (!isUuid(id)) throw new ClinAgentError('NOT_FOUND', `${hooks.label} "${id}" does not exist. Check the id.`, { [idName]: id });
    return withTransaction(db, async (tx) => {
      const [current] = await tx.select().from(t).where(and(eq(t.id, id), hooks.scope)).for('update');
      if (!current) throw new ClinAgentError('NOT_FOUND', `${hooks.label} "${id}" does not exist. Check the id.`, { [idName]: id });
      if (isTerminalStatus(current.status)) {
        throw new ClinAgentError('CONFLICT_STATE', `${hooks.label} ${id} has already ended (${current.status}); there is nothing to cancel. Reload to see its result.`, { [idName]: id, status: current.status, currentNode: current.currentNode });
      }
      const now = new Date();
      const [row] = await tx
        .update(t)
        .set({
          status: 'CANCELLED', leaseOwner: null, leaseUntil: null, onApprove: null, onReject: null, updatedAt: now, completedAt: now,
          steps: sql`${t.steps} || ${JSON.stringify([{ node: current.currentNode, type: 'cancel', at: now.toISOString(), outcome: 'cancelled', detail: { by: actor, reason } }])}::jsonb`,
        })
        .where(eq(t.id, id))
        .returning();
      const run = asRow(row!);
      await appendAuditEntries(tx, auditOf(run, { type: 'cancelled' }, { actor, oldValue: { status: current.status, node: current.currentNode }, newValue: { status: 'CANCELLED' }, reason }));
      return run;
    });
  }

  /**
   * One pass of the orphan sweep: finds runs nobody is advancing, notes the ones whose worker died, and queues
   * a job for each on `queue` (payload `{ [key]: runId }`).
   */
  async function sweepOrphans<Q extends Record<K, string>, K extends keyof Q & string>(db: Db, options: { jobs: Jobs; queue: QueueDef<Q>; key: K; batch?: BatchQueue; staleMs: number; now?: Date; limit?: number }): Promise<Orphan[]> {
    const { jobs, queue, key } = options;
    const isQueued = async (ids: string[]) => {
      const queued = await jobs.isQueued(queue, key, ids);
      if (!options.batch) return queued;
      const rest = ids.filter((id) => !queued.has(id));
      for (const id of await jobs.isQueuedInList(options.batch.queue, options.batch.key, rest)) queued.add(id);
      return queued;
    };
    const orphans = await findOrphans(db, t, { ...options, scope: hooks.scope, isQueued });
    // Runs whose worker died mid-step: the console says they are resuming, rather than sitting at 197/200.
    await markRecovered(db, t, orphans.filter((o) => o.abandoned).map((o) => o.id), recoveredAudit);
    // The singleton key keeps a slow sweep from queueing the same run twice within a minute.
    await jobs.sendMany(queue, orphans.map(({ id }) => ({ [key]: id }) as Q), { singletonKey: (payload) => payload[key], singletonSeconds: 60 });
    return orphans;
  }

  return {
    table,
    get,
    acquireLease,
    renewLease,
    keepLease,
    releaseLease,
    commitStep,
    acquireLeases,
    keepLeases,
    releaseLeases,
    commitSteps,
    decide,
    cancel,
    sweepOrphans,
    /** Runs nobody is advancing (see orphans.ts); `isQueued` says which ids already have a job waiting. */
    findOrphans: (db: Db, options: { staleMs: number; isQueued(ids: string[]): Promise<Set<string>>; now?: Date; limit?: number }) => findOrphans(db, t, { ...options, scope: hooks.scope }),
    /** Notes that runs are being picked up after their worker stopped; the next saved step clears it. */
    markRecovered: (db: Db, ids: string[]) => markRecovered(db, t, ids, recoveredAudit),
  };
}

function assertDecision(decision: Decision): void {
  if (decision.kind !== 'approve' && decision.kind !== 'reject' && decision.kind !== 'answer') {
    throw new ClinAgentError('VALIDATION_FAILED', `decision must be "approve", "reject" or "answer", not "${String((decision as { kind: unknown }).kind)}".`, { field: 'decision' });
  }
  if (!decision.actor?.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'A decision needs the person who made it. Pass actor.', { field: 'actor' });
  if (decision.kind === 'answer' && !decision.answer?.trim()) {
    throw new ClinAgentError('VALIDATION_FAILED', 'The answer is empty. Write the reply the run is waiting for.', { field: 'answer' });
  }
}
