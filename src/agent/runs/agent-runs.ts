import { eq } from 'drizzle-orm';
import type { AuditEntryInput } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { createRunStore, type Decision } from './run-store.js';

export type AgentRun = typeof agentRuns.$inferSelect;

/** What a step of an agent run saves besides the run itself: the agent's own checkpoint, replaced whole. */
export interface AgentStepWrites {
  state?: Record<string, unknown>;
}

export interface AgentRunOptions {
  /** Which agent ('protocol-stage', 'consult'); the store sees only runs of this kind. */
  kind: string;
  /** How its runs are named in messages ("Consult"). */
  label: string;
  /**
   * What the person a suspended run waits for is shown, as a string that changes when it changes (see
   * RunStoreHooks.reviewFingerprint); without it decisions are not bound to the data.
   */
  reviewFingerprint?(tx: Db, run: AgentRun): Promise<string>;
  describeReviewedData?(run: AgentRun): string;
  /** Where the run redoes its work when the data a person was asked about changed (see RunStoreHooks.redoFrom). */
  redoFrom?(run: AgentRun): string | undefined;
  onDecision?(tx: Db, run: AgentRun, decision: Decision): Promise<AuditEntryInput[]>;
}

/**
 * Durable runs of one agent kind in agent_runs, through the generic run store: lease, per-step checkpoint (with
 * the agent's `state`), suspension for a person's decision or answer, resume, and the orphan sweep. A protocol
 * stage waiting for confirmation and a consult waiting for an answer use it the same way as trial task runs.
 */
export function createAgentRunStore(options: AgentRunOptions) {
  const store = createRunStore<typeof agentRuns, AgentStepWrites>(agentRuns, {
    label: options.label,
    scope: eq(agentRuns.kind, options.kind),
    columns: (update) => (update.state ? { state: update.state } : {}),
    reviewFingerprint: options.reviewFingerprint,
    describeReviewedData: options.describeReviewedData,
    redoFrom: options.redoFrom,
    onDecision: options.onDecision,
  });

  /** A new run of this kind, PENDING at `startNode`; an agent then takes its lease and advances it. */
  async function create(db: Db, input: { startNode: string; projectId?: string | null; userId?: string | null; state?: Record<string, unknown> }): Promise<AgentRun> {
    const [row] = await db
      .insert(agentRuns)
      .values({ kind: options.kind, projectId: input.projectId ?? null, userId: input.userId ?? null, status: 'PENDING', currentNode: input.startNode, state: input.state ?? {} })
      .returning();
    return row!;
  }

  return { ...store, create };
}
