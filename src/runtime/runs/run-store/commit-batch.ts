import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { getTableColumns, sql } from 'drizzle-orm';
import { appendAuditEntries, type AuditEntryInput } from '../../../core/audit/audit-log.js';
import { queryRows, type Db } from '../../../core/db/connect.js';
import { withTransaction } from '../../../core/db/transaction.js';
import { ClinAgentError } from '../../../core/errors.js';
import type { RunRow, RunTable } from '../run-shape.js';
import { DEFAULT_LEASE_MS, isTerminalStatus, releasesLease, type StepCommit } from './contract.js';
import type { StoreTable } from './store-table.js';

/** Tries of a batch commit the server rolled back as a deadlock victim. */
const DEADLOCK_ATTEMPTS = 5;

/** PostgreSQL's deadlock_detected, as node-postgres reports it (drizzle wraps it as the cause). */
function isDeadlock(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === '40P01') return true;
  }
  return false;
}

/**
 * commitStep for the steps of many runs, in one transaction of a fixed number of statements: the run rows in one
 * UPDATE, the user's writes (onCommitMany), the review hashes of the runs that suspend, then every audit entry.
 * As with commitStep, only steps of runs `owner` still holds at that node are saved; the rows saved are returned.
 * A crash before the commit saves none of them, and each run continues from its last saved node.
 */
export function commitStepsOf<T extends RunTable, Extra, DecisionExtra>(store: StoreTable<T, Extra, DecisionExtra>) {
  type Row = T['$inferSelect'];
  const { table, t, hooks, core, auditOf } = store;

  async function commitStepsOnce(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs: number): Promise<Row[]> {
    return withTransaction(db, async (tx) => {
      const now = new Date();
      const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
      const values = steps.map(({ run, step, update }) => {
        const terminal = isTerminalStatus(update.status);
        return {
          id: core(run).id, node: step.node, status: update.status, current_node: update.nextNode, step: [step], on_approve: update.onApprove ?? null, on_reject: update.onReject ?? null,
          review_request: update.reviewRequest ?? null, error: update.error ?? null, releases: releasesLease(update.status), terminal,
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

  /** The review hash of each run that suspends, taken after the steps' own writes, as commitStep does. */
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

  return async function commitSteps(db: Db, steps: ReadonlyArray<StepCommit<Row, Extra>>, owner: string, leaseMs = DEFAULT_LEASE_MS): Promise<Row[]> {
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
  };
}
