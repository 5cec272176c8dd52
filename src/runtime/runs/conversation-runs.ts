import { setTimeout as sleep } from 'node:timers/promises';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { appendAuditEntries, PLATFORM_AUDIT_SCOPE } from '../../core/audit/audit-log.js';
import { assertWriterRole } from '../../core/auth/project-access.js';
import type { User } from '../../core/auth/users.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { ClinAgentError, errorMessage, formatIssues } from '../../core/errors.js';
import type { TraceRun } from '../../core/trace/store.js';
import type { ConversationStore } from '../conversations/index.js';
import type { AgentEventSink } from '../loop/events.js';
import { createRunStore, type Decision, type RunAuditEvent } from './run-store.js';
import type { Db } from '../../core/db/connect.js';
import type { RunReview } from './run-shape.js';
import { inFamily, type HostedRunDeps } from './run-host.js';
import { createStepDriver } from './step-driver.js';
import { withTransaction } from '../../core/db/transaction.js';

export type ConversationRun = typeof agentRuns.$inferSelect;

/** What every conversational run keeps besides its agent's own state. */
export interface ConversationRunState {
  updatedAt: string;
  traceIds: string[];
  /** The last input could not be taken (the model was down): the request that brought it reports this. */
  lastError?: { code: string; message: string };
}

/**
 * The person's input a step works on: a message (an answer, typed by the family: the consult's text and
 * attachment, a staged agent's text) or a confirmation (an approval). A step is given it as the family's schema
 * read it back from the run.
 */
export type ConversationInput<I> = { kind: 'answer'; input: I } | { kind: 'approve' };

/** What one input did: the agent's new state, and how the step is named in the run's steps and audit. */
interface StepOutcome<S> {
  state: S;
  type: string;
  outcome: string;
  detail?: unknown;
}

/** What a service built on conversation runs is given (the Protocol Agent's, the consult's), besides its own needs. */
export interface ConversationRunDeps extends HostedRunDeps {
  /** Where each exchange is logged; `start` opens a conversation's log when it begins. */
  conversations: Pick<ConversationStore, 'start' | 'append'>;
  users: { get(id: string): Promise<User | undefined> };
}

interface ConversationRunsOptions<S extends ConversationRunState, I> extends Omit<ConversationRunDeps, 'conversations'> {
  /** `staged:`, `consult:`: the run kind is the prefix and the agent id; the run host routes the family's jobs by it. */
  kindPrefix: string;
  /**
   * What a message of this family is, checked when it is taken and again when a step reads it back from the run:
   * a step is never given a shape its code does not expect (a run decided by an older version, say).
   */
  input: z.ZodType<I, unknown>;
  /** How its runs are named to people ("Conversation", "Consult"). */
  label: string;
  /** The trace kind of each step (`staged_agent`, `consult`). */
  traceKind: string;
  conversations: Pick<ConversationStore, 'append'>;
  /** The audit action of a step worth a line in the audit trail (a stage completed); none by default. */
  auditStep?(step: { type: string; outcome: string }): string | undefined;
  /**
   * Runs in the transaction that takes an input, with the run row locked: what the family keeps beside the run
   * (the consult's client message ids) is written with the input or not at all; what it throws refuses the input.
   */
  onDecision?(tx: Db, run: ConversationRun, decision: Decision): Promise<void>;
  /**
   * Handles one input. Whatever it throws ends the step: the run waits again for input, the input not taken, and the
   * request that brought it gets the error (a fault that is not a ClinAgentError as a plain INTERNAL one).
   */
  step(run: ConversationRun, input: { review: RunReview; given: ConversationInput<I>; state: S; trace: TraceRun; onEvent?: AgentEventSink; signal?: AbortSignal }): Promise<StepOutcome<S>>;
  /**
   * The service's own answer in place of a step that threw (the model down, a fault), so the input is taken after
   * all (the consult's risk advice needs no model). Given the state with the failed step's tokens already counted;
   * undefined leaves the run waiting with the error reported. Never called for a cancelled step.
   */
  recover?(run: ConversationRun, failure: { review: RunReview; given: ConversationInput<I>; state: S; error: unknown; trace: TraceRun }): StepOutcome<S> | undefined;
  /** Counts in the state the tokens of a step that threw (cancelled ones too); a step that ends counts its own. */
  chargeTokens?(state: S, tokens: number): S;
  /** What the step said, logged in the conversation after it is saved: the person's text and the reply. */
  exchangeOf?(state: S): { asked: string; answered: string; traceId?: string } | undefined;
  /** The trace input of a step (the stage it is at). */
  traceInput?(run: ConversationRun, state: S): Record<string, unknown>;
}

/**
 * How a step's trace ends: a stopped stream (the person closed it) is `cancelled`, as on every other stream; a
 * failure keeps what failed for the operator, even when the service answered the person in its place.
 */
function traceOutcome(error: unknown): { status: 'success' | 'failed' | 'cancelled'; error?: string } {
  if (error === undefined) return { status: 'success' };
  if (ClinAgentError.isInstance(error) && error.code === 'CANCELLED') return { status: 'cancelled', error: error.message };
  return { status: 'failed', error: errorMessage(error) };
}

/**
 * The step's trace, counting the tokens of every model call as the gateway records it: a step that throws returns
 * no progress, and its calls must still count against the budget.
 */
function countingTokens(trace: TraceRun): { trace: TraceRun; tokens(): number } {
  let tokens = 0;
  const counted: TraceRun = {
    traceId: trace.traceId,
    finish: (outcome) => trace.finish(outcome),
    span: (kind, name, input, fn, describe) =>
      trace.span(kind, name, input, fn, (result) => {
        const outcome = describe ? describe(result) : { output: result };
        tokens += (outcome.usage?.promptTokens ?? 0) + (outcome.usage?.completionTokens ?? 0);
        return outcome;
      }),
  };
  return { trace: counted, tokens: () => tokens };
}

/**
 * The run store of one family of conversation runs: the rows of agent_runs whose kind starts with its prefix, each
 * step saving the agent's state with the run. Apart from createConversationRuns so the RunStore conformance spec
 * runs against the very store the consult and the staged agents use.
 */
export function createConversationRunStore<S extends ConversationRunState>(options: Pick<ConversationRunsOptions<S, unknown>, 'kindPrefix' | 'label' | 'auditStep' | 'onDecision'>) {
  const { kindPrefix } = options;
  const auditAction = (event: RunAuditEvent): string | undefined => {
    if (event.type === 'step') return options.auditStep?.({ type: event.step.type, outcome: event.step.outcome });
    if (event.type === 'recovered' || event.type === 'cancelled') return event.type;
    return undefined;
  };
  return createRunStore<typeof agentRuns, { state?: S }>(agentRuns, {
    label: options.label,
    idName: 'runId',
    scope: inFamily(kindPrefix),
    columns: (update) => (update.state ? { state: update.state as unknown as Record<string, unknown> } : {}),
    audit: { entityType: 'agent_run', projectId: (run) => run.projectId ?? PLATFORM_AUDIT_SCOPE, actor: (run) => `agent:${run.kind.slice(kindPrefix.length)}`, action: auditAction },
    ...(options.onDecision ? { onDecision: async (tx: Db, run: ConversationRun, decision: Decision) => { await options.onDecision!(tx, run, decision); return []; } } : {}),
  });
}

/**
 * A request whose own advance found the run's lease taken (a job the orphan sweep or a retry queued for a recovering
 * run got there between the person's decision and this request) waits for that worker's step by reading the run
 * every OTHER_WORKER_POLL_MS, for at most OTHER_WORKER_WAIT_MS, then tells the person to reload. Reading the row
 * on a timer, because that worker may be in another process: PGlite has no LISTEN/NOTIFY and pg-boss learns of a
 * job's completion by polling too, while the saved run is what the person is shown anyway. It happens only to a
 * recovering run, so these reads cost nothing in the common case.
 */
const OTHER_WORKER_POLL_MS = 250;
const OTHER_WORKER_WAIT_MS = 120_000;
const INPUT_NODE = 'input';

/**
 * Conversations that are durable runs (a protocol being drafted, a consult): one run of the `agent_runs` table per
 * conversation, waiting at the `input` node for the person's next message (an answer) or confirmation (an
 * approval); each input is one step on the one step driver, checkpointed with the agent's state. So a conversation
 * survives restarts and killed workers, continues from any device, and takes one input at a time. The request that
 * brings an input runs its step itself, streaming to the person; a step left by a dead process is picked up by the
 * orphan sweep and run by a worker.
 */
export function createConversationRuns<S extends ConversationRunState, I>(options: ConversationRunsOptions<S, I>) {
  const { db, kindPrefix, host } = options;
  const kindOf = (agentId: string): string => `${kindPrefix}${agentId}`;
  const agentIdOf = (run: Pick<ConversationRun, 'kind'>): string => run.kind.slice(kindPrefix.length);
  const stateOf = (run: ConversationRun): S => run.state as unknown as S;

  /**
   * The person's message as the family's schema reads it. A stored input it refuses is a fault of ours: the person
   * is told so in plain words (with the trace id), and the trace and the log keep what did not match.
   */
  function inputOf(run: ConversationRun, review: RunReview): ConversationInput<I> {
    if (review.decision !== 'answer') return { kind: 'approve' };
    const parsed = options.input.safeParse(review.input);
    if (!parsed.success) throw new Error(`${options.label} ${run.id}: the stored message is not one this agent reads: ${formatIssues(parsed.error.issues).join('; ')}`);
    return { kind: 'answer', input: parsed.data };
  }

  const store = createConversationRunStore<S>(options);
  const driver = createStepDriver({ store, db, logger: options.logger, workerId: options.workerId, leaseMs: options.leaseMs, queue: host.queue, key: host.key, jobs: host.jobs, label: options.label.toLowerCase() });

  /** What went wrong in a step that threw, for its trace; the step itself ends normally so nothing retries it. */
  interface StepFailure {
    error: unknown;
  }

  async function step(run: ConversationRun, trace: TraceRun, failures: StepFailure[], onEvent?: AgentEventSink, signal?: AbortSignal) {
    const saved = stateOf(run);
    const review = run.review as RunReview | null;
    const waitAgain = (state: S, type: string, outcome: string, detail?: unknown) => ({
      step: { type, outcome, next: INPUT_NODE, detail },
      update: {
        nextNode: INPUT_NODE, status: 'SUSPENDED' as const, onApprove: INPUT_NODE, onReject: INPUT_NODE, reviewRequest: { awaiting: 'input' as const },
        state: { ...state, traceIds: [...saved.traceIds, trace.traceId].slice(-200), updatedAt: new Date().toISOString() },
      },
    });
    if (!review) return waitAgain(saved, 'input', 'nothing_to_do');
    const counted = countingTokens(trace);
    let given: ConversationInput<I> | undefined;
    try {
      given = inputOf(run, review);
      onEvent?.({ type: 'run_started', traceId: trace.traceId, conversationId: run.conversationId ?? undefined, runId: run.id });
      const done = await options.step(run, { review, given, state: { ...saved, lastError: undefined }, trace: counted.trace, onEvent, signal });
      return waitAgain({ ...done.state, lastError: undefined }, done.type, done.outcome, done.detail);
    } catch (error) {
      // Whatever failed, the step ends here and the conversation waits for input again. A step thrown back to the
      // driver left the run RUNNING for the orphan sweep and pg-boss to retry, calling the model each time while
      // every later message was refused as "still being answered" (issue 31).
      failures.push({ error });
      const isCancelled = ClinAgentError.isInstance(error) && error.code === 'CANCELLED';
      const charged = options.chargeTokens ? options.chargeTokens({ ...saved, lastError: undefined }, counted.tokens()) : { ...saved, lastError: undefined };
      if (!isCancelled) options.logger.error({ runId: run.id, traceId: trace.traceId, err: errorMessage(error) }, `${options.label}: a message could not be answered`);
      const recovered = isCancelled || !given ? undefined : options.recover?.(run, { review, given, state: charged, error, trace });
      if (recovered) return waitAgain({ ...recovered.state, lastError: undefined }, recovered.type, recovered.outcome, recovered.detail);
      const reported = ClinAgentError.isInstance(error)
        ? { code: error.code, message: error.message }
        : { code: 'INTERNAL', message: `This message could not be answered because of a fault on our side (trace ${trace.traceId}). Send it again; if it fails again, report the trace id.` };
      return waitAgain({ ...charged, lastError: reported }, review.decision === 'approve' ? 'confirm' : 'message', 'error', { code: reported.code });
    }
  }

  /** A message as it is taken: refused with every problem named when it is not what this family reads. */
  function parseInput(value: I): I {
    const parsed = options.input.safeParse(value);
    if (!parsed.success) throw new ClinAgentError('VALIDATION_FAILED', `message: ${formatIssues(parsed.error.issues).join('; ')}`, { field: 'message' });
    return parsed.data;
  }

  async function advance(runId: string, onEvent?: AgentEventSink, signal?: AbortSignal): Promise<ConversationRun | undefined> {
    const failures: StepFailure[] = [];
    return driver.advance<TraceRun>(runId, {
      begin: (run) => options.trace.start({ kind: options.traceKind, name: agentIdOf(run), userId: run.userId ?? undefined, projectId: run.projectId ?? undefined, input: { conversationId: run.conversationId, ...options.traceInput?.(run, stateOf(run)) } }),
      execute: (run, _node, trace) => step(run, trace, failures, onEvent, signal),
      async finish(trace, run, error) {
        await trace.finish(traceOutcome(error ?? failures.at(-1)?.error));
        if (!error && run && !stateOf(run).lastError) await logExchange(run);
      },
    });
  }

  /** The message and the reply in the conversation log, after the step is saved (lists and conversation pages read it). */
  async function logExchange(run: ConversationRun): Promise<void> {
    const exchange = options.exchangeOf?.(stateOf(run));
    const owner = run.userId ? await options.users.get(run.userId) : undefined;
    if (!exchange || !owner || !run.conversationId) return;
    await options.conversations
      .append(run.conversationId, [{ role: 'user', content: exchange.asked }, { role: 'assistant', content: exchange.answered, traceId: exchange.traceId }], owner)
      .catch((error) => options.logger.warn({ runId: run.id, err: errorMessage(error) }, `${options.label}: the exchange could not be logged in its conversation`));
  }

  host.register({ prefix: kindPrefix, label: options.label.toLowerCase(), advance: (runId) => advance(runId) });

  return {
    store,
    stateOf,
    agentIdOf,
    /** A new conversation's run, waiting for its first input; audited as created in the same transaction. */
    async create(actor: User, input: { agentId: string; projectId?: string | null; conversationId: string; state: S }): Promise<ConversationRun> {
      assertWriterRole(actor);
      return withTransaction(db, async (tx) => {
        const [row] = await tx
          .insert(agentRuns)
          .values({
            kind: kindOf(input.agentId), userId: actor.id, projectId: input.projectId ?? null, conversationId: input.conversationId,
            status: 'SUSPENDED', currentNode: INPUT_NODE, onApprove: INPUT_NODE, onReject: INPUT_NODE, reviewRequest: { awaiting: 'input' },
            state: input.state as unknown as Record<string, unknown>,
          })
          .returning();
        await appendAuditEntries(tx, [{ projectId: row!.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: row!.id, action: 'created', actor: actor.id, newValue: { agent: input.agentId, conversationId: input.conversationId } }]);
        return row!;
      });
    },
    /** The conversation's run, if it is the actor's: anyone else gets the same 404 as for a missing id. */
    async owned(agentId: string, conversationId: string, actor: Pick<User, 'id'>): Promise<ConversationRun> {
      const [run] = await db.select().from(agentRuns).where(and(eq(agentRuns.kind, kindOf(agentId)), eq(agentRuns.conversationId, conversationId))).limit(1);
      if (!run || run.userId !== actor.id) {
        throw new ClinAgentError('NOT_FOUND', `${options.label} "${conversationId}" does not exist. Check the id; it is visible only to the user who started it.`, { conversationId });
      }
      return run;
    },
    /** The actor's conversations with the agent, most recently active first. */
    async list(agentId: string, actor: Pick<User, 'id'>, limit = 100): Promise<ConversationRun[]> {
      return db.select().from(agentRuns).where(and(eq(agentRuns.kind, kindOf(agentId)), eq(agentRuns.userId, actor.id))).orderBy(desc(agentRuns.updatedAt)).limit(limit);
    },
    /**
     * Takes the person's input and runs its step here, streaming to them; the run as saved after it. One input at
     * a time: a second one while the first is answered is refused. A step another process took over is waited for.
     */
    async take(run: ConversationRun, actor: User, input: ConversationInput<I>, stream: { onEvent?: AgentEventSink; signal?: AbortSignal } = {}): Promise<ConversationRun> {
      assertWriterRole(actor);
      if (run.status !== 'SUSPENDED') {
        throw new ClinAgentError('CONFLICT_STATE', `The previous message of this ${options.label.toLowerCase()} is still being answered; wait for its answer, then send this again.`, { conversationId: run.conversationId });
      }
      const decision = input.kind === 'answer' ? { kind: 'answer' as const, input: parseInput(input.input) } : input;
      await store.decide(db, run.id, { ...decision, actor: actor.id });
      const saved = await advance(run.id, stream.onEvent, stream.signal);
      const after = saved ?? (await waitForStep(run.id, { signal: stream.signal }));
      const error = stateOf(after).lastError;
      if (error) throw new ClinAgentError(error.code as never, error.message);
      return after;
    },
    /**
     * Changes the state of a run that waits for input (an edit, a card's result), in one conditional UPDATE on the
     * state's own stamp: a run busy with a message, or changed by another edit meanwhile, is refused rather than
     * overwritten, so neither write is lost.
     */
    async saveWaiting(run: ConversationRun, state: S, actor: User, audit: { action: string; newValue: unknown }): Promise<ConversationRun> {
      assertWriterRole(actor);
      const saved = await withTransaction(db, async (tx) => {
        const [row] = await tx
          .update(agentRuns)
          .set({ state: state as unknown as Record<string, unknown>, updatedAt: new Date() })
          // The state's own stamp, not updated_at: the column's microseconds do not survive a round trip through a JS Date.
          .where(and(eq(agentRuns.id, run.id), eq(agentRuns.status, 'SUSPENDED'), sql`${agentRuns.state}->>'updatedAt' = ${stateOf(run).updatedAt}`))
          .returning();
        if (!row) return undefined;
        await appendAuditEntries(tx, [{ projectId: row.projectId ?? PLATFORM_AUDIT_SCOPE, entityType: 'agent_run', entityId: row.id, action: audit.action, actor: actor.id, newValue: audit.newValue }]);
        return row;
      });
      if (!saved) {
        throw new ClinAgentError('CONFLICT_STATE', `The ${options.label.toLowerCase()} changed while you edited it (a message is being answered, or another edit was saved). Reload it and make the edit again.`, { conversationId: run.conversationId });
      }
      return saved;
    },
    advance,
    waitForStep,
  };

  /**
   * The run once the step another worker is running has been saved (it waits for input again, or it ended); see
   * OTHER_WORKER_POLL_MS. Refused with CONFLICT_STATE after `timeoutMs`, and with CANCELLED when the person stops
   * waiting (the signal of their stream); the step goes on in its worker either way.
   */
  async function waitForStep(runId: string, wait: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ConversationRun> {
    const deadline = Date.now() + (wait.timeoutMs ?? OTHER_WORKER_WAIT_MS);
    for (;;) {
      const run = await store.get(db, runId);
      if (!run) throw new ClinAgentError('NOT_FOUND', `${options.label} run "${runId}" does not exist any more. Reload the conversation list.`, { runId });
      if (run.status !== 'RUNNING' && run.status !== 'PENDING') return run;
      if (Date.now() >= deadline) break;
      try {
        await sleep(OTHER_WORKER_POLL_MS, undefined, { signal: wait.signal });
      } catch {
        throw new ClinAgentError('CANCELLED', 'You stopped waiting for the answer; it is still being written. Reload the conversation in a moment to see it.', { runId });
      }
    }
    throw new ClinAgentError('CONFLICT_STATE', 'Your message is being answered by another server process; reload in a moment to see the answer.', { runId });
  }
}
