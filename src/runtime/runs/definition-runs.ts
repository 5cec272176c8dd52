import { createHash } from 'node:crypto';
import { and, desc, eq, lt, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { appendAuditEntries, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { ClinAgentError, formatIssues } from '../../core/errors.js';
import type { ChatMessage } from '../../core/llm/types.js';
import type { RunStep } from './run-shape.js';
import { inFamily } from './run-host.js';
import { createRunStore, type RunAuditEvent } from './run-store.js';
import { withTransaction } from '../../core/db/transaction.js';

export type DefinitionRun = typeof agentRuns.$inferSelect;

/**
 * Runs of declared agents share agent_runs with the conversation runs (`consult:`, `staged:`): their kind is
 * `agent:<definition id>`, so this store sees only them, and the run host routes their jobs here.
 */
export const DEFINITION_KIND_PREFIX = 'agent:';
const KIND_PREFIX = DEFINITION_KIND_PREFIX;
export const kindOf = (definitionId: string): string => `${KIND_PREFIX}${definitionId}`;
export const definitionIdOf = (run: Pick<DefinitionRun, 'kind'>): string => run.kind.slice(KIND_PREFIX.length);

/** The node a definition run works at; a run waiting for a person is suspended at it and resumes there. */
export const TURN_NODE = 'turn';

/** A definition run's checkpoint: the turn's messages (system prompt first), and its result once it ends. */
export interface DefinitionRunState {
  input: string;
  messages: ChatMessage[];
  /** The decidedAt of the last decision whose reply is in `messages`: a decision is appended once. */
  appliedDecisionAt?: string;
  answer?: string;
  traceIds?: string[];
}

export const stateOf = (run: DefinitionRun): DefinitionRunState => run.state as unknown as DefinitionRunState;

/**
 * A definition run's checkpoint as it is stored: checked when the run is created and when a worker loads it for a
 * turn, so a turn never starts from a shape its code does not expect (a row written by hand, or by another version).
 */
const DefinitionRunStateSchema = z.object({
  input: z.string(),
  messages: z.array(z.looseObject({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']) })).min(1),
  appliedDecisionAt: z.string().optional(),
  answer: z.string().optional(),
  traceIds: z.array(z.string()).optional(),
});

/** The problems of a stored checkpoint, one `path: message` line each; none when a turn can start from it. */
export function stateProblems(state: unknown): string[] {
  const parsed = DefinitionRunStateSchema.safeParse(state);
  return parsed.success ? [] : formatIssues(parsed.error.issues);
}

/**
 * One audit entry per event a person cares about: created, waiting, decided, recovered, finished, cancelled. The
 * turn's own steps are in the run's steps and its trace, not repeated in the audit trail.
 */
function auditAction(event: RunAuditEvent): string | undefined {
  switch (event.type) {
    case 'step': return event.status === 'SUSPENDED' ? 'waiting' : event.status === 'COMPLETED' || event.status === 'FAILED' ? 'finished' : undefined;
    case 'decision': return 'decided';
    default: return event.type;
  }
}

export const definitionRunStore = createRunStore<typeof agentRuns, { state?: DefinitionRunState }>(agentRuns, {
  label: 'Agent run',
  scope: inFamily(KIND_PREFIX),
  columns: (update) => (update.state ? { state: update.state as unknown as Record<string, unknown> } : {}),
  audit: { entityType: 'agent_run', projectId: (run) => run.projectId ?? PLATFORM_AUDIT_SCOPE, actor: (run) => `agent:${definitionIdOf(run)}`, action: auditAction },
  // What the person was shown is the conversation up to the question; an answer to an older question is refused.
  reviewFingerprint: async (_tx, run) => JSON.stringify(stateOf(run).messages),
  describeReviewedData: () => 'the conversation',
});

/** A new run, PENDING at the turn node, audited as created in the same transaction. */
export async function createDefinitionRun(db: Db, input: { definitionId: string; userId: string; projectId?: string | null; conversationId?: string | null; state: DefinitionRunState }): Promise<DefinitionRun> {
  const problems = stateProblems(input.state);
  if (problems.length) throw new ClinAgentError('INTERNAL', `An agent run of "${input.definitionId}" cannot start from this state:\n${problems.join('\n')}`, { problems });
  return withTransaction(db, async (tx) => {
    const [row] = await tx
      .insert(agentRuns)
      .values({ kind: kindOf(input.definitionId), userId: input.userId, projectId: input.projectId ?? null, conversationId: input.conversationId ?? null, status: 'PENDING', currentNode: TURN_NODE, state: input.state as unknown as Record<string, unknown> })
      .returning();
    // The input is the user's text: the audit trail names the run and its agent, not what was asked.
    const inputHash = createHash('sha256').update(input.state.input).digest('hex');
    await appendAuditEntries(tx, [{ projectId: row!.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: row!.id, action: 'created', actor: input.userId, newValue: { agent: input.definitionId, conversationId: row!.conversationId, inputHash } }]);
    return row!;
  });
}

/** Newest first, `limit` at a time; `before` is the createdAt/id cursor of the last row of the previous page. */
export async function listDefinitionRuns(db: Db, filter: { definitionId?: string; userId?: string; limit: number; before?: { createdAt: Date; id: string } }): Promise<DefinitionRun[]> {
  const conditions: SQL[] = [inFamily(KIND_PREFIX)];
  if (filter.definitionId) conditions.push(eq(agentRuns.kind, kindOf(filter.definitionId)));
  if (filter.userId) conditions.push(eq(agentRuns.userId, filter.userId));
  if (filter.before) conditions.push(or(lt(agentRuns.createdAt, filter.before.createdAt), and(eq(agentRuns.createdAt, filter.before.createdAt), lt(agentRuns.id, filter.before.id)))!);
  return db.select().from(agentRuns).where(and(...conditions)).orderBy(desc(agentRuns.createdAt), desc(agentRuns.id)).limit(filter.limit);
}

/**
 * A run that failed because the model stayed unavailable goes back to PENDING at the node it failed at, with what
 * it had (the person's reply included), audited as retried. Any other run is refused: its failure would repeat, or
 * it has not failed. The `retry` step ends the run's count of unavailable attempts, so it gets the whole budget again.
 */
export async function reopenDefinitionRun(db: Db, id: string, actor: string, unavailableStep: string): Promise<DefinitionRun> {
  return withTransaction(db, async (tx) => {
    const [current] = await tx.select().from(agentRuns).where(and(eq(agentRuns.id, id), inFamily(KIND_PREFIX)));
    const last = (current?.steps as RunStep[] | undefined)?.at(-1);
    if (!current || current.status !== 'FAILED' || last?.type !== unavailableStep) {
      throw new ClinAgentError('CONFLICT_STATE', `Agent run "${id}" is ${current?.status ?? 'gone'}${current?.status === 'FAILED' ? ' for a reason a retry would repeat' : ''}: only a run that failed because the model was unavailable can be retried. Start a new run instead.`, { runId: id, status: current?.status });
    }
    const now = new Date();
    const step: RunStep = { node: current.currentNode, type: 'retry', at: now.toISOString(), outcome: 'pass' };
    const [row] = await tx
      .update(agentRuns)
      .set({ status: 'PENDING', error: null, completedAt: null, leaseOwner: null, leaseUntil: null, updatedAt: now, steps: sql`${agentRuns.steps} || ${JSON.stringify([step])}::jsonb` })
      .where(and(eq(agentRuns.id, id), eq(agentRuns.status, 'FAILED')))
      .returning();
    await appendAuditEntries(tx, [{ projectId: row!.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: id, action: 'retried', actor, oldValue: { status: 'FAILED' }, newValue: { status: 'PENDING', node: row!.currentNode } }]);
    return row!;
  });
}
