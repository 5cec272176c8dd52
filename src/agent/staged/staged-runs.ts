import { and, desc, eq, like, sql } from 'drizzle-orm';
import { appendAuditEntries, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { createRunStore, type RunAuditEvent } from '../runs/run-store.js';
import type { StagedRunState } from './types.js';

export type StagedRun = typeof agentRuns.$inferSelect;

/**
 * A staged agent's conversation is one durable run in agent_runs, of kind `staged:<agent id>`: it waits at the
 * `input` node for the user's next message (an answer) or confirmation of the stage (an approval), and every
 * message is one committed step. Its own kind keeps it out of the definition runs' store, sweep and queue.
 */
const KIND_PREFIX = 'staged:';
export const stagedKind = (agentId: string): string => `${KIND_PREFIX}${agentId}`;
export const stagedAgentIdOf = (run: Pick<StagedRun, 'kind'>): string => run.kind.slice(KIND_PREFIX.length);
export const INPUT_NODE = 'input';
export const stagedStateOf = (run: StagedRun): StagedRunState => run.state as unknown as StagedRunState;

/** The audit trail names what a person would ask about later: a protocol started, a stage completed. Messages are in the trace. */
function auditAction(event: RunAuditEvent): string | undefined {
  if (event.type === 'step' && event.step.type === 'stage_complete' && event.step.outcome === 'pass') return 'stage_completed';
  if (event.type === 'recovered' || event.type === 'cancelled') return event.type;
  return undefined;
}

export const stagedRunStore = createRunStore<typeof agentRuns, { state?: StagedRunState }>(agentRuns, {
  label: 'Conversation',
  idName: 'runId',
  scope: like(agentRuns.kind, `${KIND_PREFIX}%`),
  columns: (update) => (update.state ? { state: update.state as unknown as Record<string, unknown> } : {}),
  audit: { entityType: 'agent_run', projectId: (run) => run.projectId ?? PLATFORM_AUDIT_SCOPE, actor: (run) => `agent:${stagedAgentIdOf(run)}`, action: auditAction },
});

/** A new conversation's run, waiting for its first message; audited as created in the same transaction. */
export async function createStagedRun(db: Db, input: { agentId: string; userId: string; projectId?: string | null; conversationId: string; state: StagedRunState }): Promise<StagedRun> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    const [row] = await tx
      .insert(agentRuns)
      .values({
        kind: stagedKind(input.agentId), userId: input.userId, projectId: input.projectId ?? null, conversationId: input.conversationId,
        status: 'SUSPENDED', currentNode: INPUT_NODE, onApprove: INPUT_NODE, onReject: INPUT_NODE, reviewRequest: { awaiting: 'input' },
        state: input.state as unknown as Record<string, unknown>,
      })
      .returning();
    await appendAuditEntries(tx, [{ projectId: row!.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: row!.id, action: 'created', actor: input.userId, newValue: { agent: input.agentId, conversationId: input.conversationId } }]);
    return row!;
  });
}

export async function findStagedRun(db: Db, agentId: string, conversationId: string): Promise<StagedRun | undefined> {
  const [row] = await db.select().from(agentRuns).where(and(eq(agentRuns.kind, stagedKind(agentId)), eq(agentRuns.conversationId, conversationId))).limit(1);
  return row;
}

export async function listStagedRuns(db: Db, agentId: string, userId: string, limit = 100): Promise<StagedRun[]> {
  return db.select().from(agentRuns).where(and(eq(agentRuns.kind, stagedKind(agentId)), eq(agentRuns.userId, userId))).orderBy(desc(agentRuns.updatedAt)).limit(limit);
}

/**
 * Changes the state of a run that waits for input (an edit in the state panel, a card's result), in one
 * conditional UPDATE: a run busy with a message is refused rather than overwritten, so neither write is lost.
 */
export async function updateWaitingState(db: Db, run: StagedRun, state: StagedRunState, audit: { actor: string; action: string; newValue: unknown }): Promise<StagedRun | undefined> {
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    const [row] = await tx
      .update(agentRuns)
      .set({ state: state as unknown as Record<string, unknown>, updatedAt: new Date() })
      // The state's own stamp, not updated_at: the column's microseconds do not survive a round trip through a JS Date.
      .where(and(eq(agentRuns.id, run.id), eq(agentRuns.status, 'SUSPENDED'), sql`${agentRuns.state}->>'updatedAt' = ${stagedStateOf(run).updatedAt}`))
      .returning();
    if (!row) return undefined;
    await appendAuditEntries(tx, [{ projectId: row.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: row.id, action: audit.action, actor: audit.actor, newValue: audit.newValue }]);
    return row;
  });
}
