import { and, eq, sql } from 'drizzle-orm';
import { appendAuditEntries } from '../../../core/audit/audit-log.js';
import type { Db } from '../../../core/db/connect.js';
import { withTransaction } from '../../../core/db/transaction.js';
import { ClinAgentError } from '../../../core/errors.js';
import { isUuid } from '../../../core/ids.js';
import type { RunReview, RunTable } from '../run-shape.js';
import type { Decision } from './contract.js';
import type { StoreTable } from './store-table.js';

/**
 * A person's decision on a suspended run: approve or reject, or the answer it waits for. Only one decision wins:
 * the run row is locked and must be SUSPENDED, so a second reviewer (or a double click) gets CONFLICT_STATE with
 * the run's current state. A decision on data that changed since the run suspended is refused with
 * CONFLICT_STATE too, and the run waits again, now for a review of the current data.
 */
export function decideOf<T extends RunTable, Extra, DecisionExtra>({ t, hooks, idName, asRow, auditOf, fingerprintHash, notFound }: StoreTable<T, Extra, DecisionExtra>) {
  type Row = T['$inferSelect'];
  return async function decide(db: Db, id: string, decision: Decision & DecisionExtra): Promise<Row> {
    assertDecision(decision);
    if (!isUuid(id)) throw notFound(id);
    const outcome = await withTransaction(db, async (tx) => {
      const now = new Date();
      const [current] = await tx.select().from(t).where(and(eq(t.id, id), hooks.scope)).for('update');
      if (!current) throw notFound(id);
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
          review: { reviewer: decision.actor, decision: decision.kind, comment: decision.comment ?? '', ...(decision.kind === 'answer' ? answerOf(decision) : {}), decidedAt: now.toISOString() },
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
  };
}

/** What an answer saves in the run's review: the reply text, the typed input, or both. */
function answerOf(decision: Extract<Decision, { kind: 'answer' }>): Pick<RunReview, 'answer' | 'input'> {
  return { ...(decision.answer !== undefined ? { answer: decision.answer } : {}), ...(decision.input !== undefined ? { input: decision.input } : {}) };
}

function assertDecision(decision: Decision): void {
  if (decision.kind !== 'approve' && decision.kind !== 'reject' && decision.kind !== 'answer') {
    throw new ClinAgentError('VALIDATION_FAILED', `decision must be "approve", "reject" or "answer", not "${String((decision as { kind: unknown }).kind)}".`, { field: 'decision' });
  }
  if (!decision.actor?.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'A decision needs the person who made it. Pass actor.', { field: 'actor' });
  if (decision.kind === 'answer' && decision.input === undefined && !decision.answer?.trim()) {
    throw new ClinAgentError('VALIDATION_FAILED', 'The answer is empty. Write the reply the run is waiting for.', { field: 'answer' });
  }
}
