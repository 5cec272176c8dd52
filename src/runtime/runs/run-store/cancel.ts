import { and, eq, sql } from 'drizzle-orm';
import { appendAuditEntries } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import { withTransaction } from '../../../core/db/transaction.js';
import { ClinAgentError } from '../../../core/errors.js';
import { isUuid } from '../../../core/ids.js';
import type { RunTable } from '../run-shape.js';
import { isTerminalStatus } from './contract.js';
import type { StoreTable } from './store-table.js';

/**
 * Stops a run that has not ended: CANCELLED, lease and review cleared, in one conditional UPDATE, so a worker
 * in the middle of a step finds the run no longer its when it commits and stops without saving. Refused with
 * CONFLICT_STATE (and the run's state) when it has already ended.
 */
export function cancelOf<T extends RunTable, Extra, DecisionExtra>({ t, hooks, idName, asRow, auditOf, notFound }: StoreTable<T, Extra, DecisionExtra>) {
  type Row = T['$inferSelect'];
  return async function cancel(db: Db, id: string, actor: string, reason = ''): Promise<Row> {
    if (!isUuid(id)) throw notFound(id);
    return withTransaction(db, async (tx) => {
      const [current] = await tx.select().from(t).where(and(eq(t.id, id), hooks.scope)).for('update');
      if (!current) throw notFound(id);
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
  };
}
