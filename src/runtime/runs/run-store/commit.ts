import { and, eq, sql } from 'drizzle-orm';
import { appendAuditEntries } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import { withTransaction } from '../../../core/db/transaction.js';
import type { RunStep, RunTable } from '../run-shape.js';
import { DEFAULT_LEASE_MS, isTerminalStatus, releasesLease, type RunUpdate } from './contract.js';
import type { StoreTable } from './store-table.js';

/**
 * Saves one executed node: its step, the user's writes (onCommit) and the next node, in one transaction, and only
 * if `owner` still holds the run at that node; undefined otherwise (another worker took it over, or the run was
 * cancelled). A run that suspends saves the hash of what its reviewer will be shown, taken after this step's own writes.
 */
export function commitStepOf<T extends RunTable, Extra, DecisionExtra>({ t, hooks, asRow, core, auditOf, fingerprintHash }: StoreTable<T, Extra, DecisionExtra>) {
  type Row = T['$inferSelect'];
  return async function commitStep(db: Db, run: Row, owner: string, step: RunStep, update: RunUpdate & Extra, leaseMs = DEFAULT_LEASE_MS): Promise<Row | undefined> {
    return withTransaction(db, async (tx) => {
      const now = new Date();
      const terminal = isTerminalStatus(update.status);
      const releases = releasesLease(update.status);
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
  };
}
