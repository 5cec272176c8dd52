import type { Role } from '../../core/db/schema/auth.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { TraceRun } from '../../core/trace/store.js';
import type { User } from '../../core/auth/users.js';
import type { ConversationStore } from '../conversations/index.js';
import type { AgentDefinition } from '../definitions/agent-definition.js';
import { createDefinitionRun, DEFINITION_KIND_PREFIX, definitionIdOf, definitionRunStore, listDefinitionRuns, reopenDefinitionRun, stateOf, stateProblems, type DefinitionRun, type DefinitionRunState } from './definition-runs.js';
import { runTurn, withReplyApplied, type TurnDeps } from './definition-turn.js';
import type { HostedRunDeps } from './run-host.js';
import { createStepDriver, isRetryableRunError, MODEL_UNAVAILABLE_STEP, type ModelOutagePolicy } from './step-driver.js';

export { newRunWorkerId } from './step-driver.js';

interface AgentRunActor {
  id: string;
  role: Role;
}

interface AgentRunServiceDeps extends TurnDeps, HostedRunDeps {
  /** Every agent by id (the agent registry); a durable run resolves its definition here when it starts and each time it advances. */
  definitions: { has(id: string): boolean; get(id: string): AgentDefinition<string> };
  /**
   * The conversation log a run answers in (a conversation knows its agent and its runs): the input and the person's
   * replies are logged by the request that brings them, the run's questions and answer once the step that made
   * them is saved. Absent (a library caller), runs keep their messages in their own state only.
   */
  conversations?: Pick<ConversationStore, 'start' | 'append'>;
  /** Finds the run's owner, in whose name a worker logs the run's turns. */
  users?: { get(id: string): Promise<User | undefined> };
  /** How long a run waits out a model outage; AGENT_RUN_OUTAGE otherwise. */
  modelOutage?: ModelOutagePolicy;
}

/**
 * A person usually waits on a durable run (they just answered it): two attempts five seconds apart, then the run
 * says the model is unavailable, keeps what they said, and can be retried, rather than leaving them watching it wait.
 */
const AGENT_RUN_OUTAGE: ModelOutagePolicy = { attempts: 2, firstDelayMs: 5_000 };

/**
 * Durable runs of declared agents: started from the API, advanced by job workers through the one step driver,
 * suspended while they wait for a person's answer or approval, resumed by that person, cancelled by them. A run
 * belongs to its user: anyone else gets NOT_FOUND, as for a missing id; admins may read any.
 */
export function createAgentRunService(deps: AgentRunServiceDeps) {
  const { host } = deps;
  const driver = createStepDriver({ store: definitionRunStore, db: deps.db, logger: deps.logger, workerId: deps.workerId, leaseMs: deps.leaseMs, queue: host.queue, key: host.key, jobs: host.jobs, label: 'agent run', modelOutage: deps.modelOutage ?? AGENT_RUN_OUTAGE });

  async function owned(id: string, actor: AgentRunActor, how: 'read' | 'act'): Promise<DefinitionRun> {
    const run = await definitionRunStore.get(deps.db, id);
    const mayRead = run && (run.userId === actor.id || (how === 'read' && actor.role === 'admin'));
    if (!run || !mayRead) throw new ClinAgentError('NOT_FOUND', `Agent run "${id}" does not exist. Check the id; a run is visible to the user who started it (and to admins).`, { runId: id });
    return run;
  }

  /** Creates the run and queues its first turn; the caller gets it at once (202) and follows it with get. */
  async function start(actor: User, request: { scenarioId: string; input: string; conversationId?: string; projectId?: string }): Promise<DefinitionRun> {
    const definition = deps.definitions.get(request.scenarioId);
    if (definition.engine.type !== 'builtin') {
      throw new ClinAgentError('VALIDATION_FAILED', `Scenario "${definition.id}" runs on the ${definition.engine.type} engine, which keeps its own runs; start it with POST /api/agent/run instead.`, { field: 'scenarioId' });
    }
    // Refused before anything is stored: a run that could never take its first turn would only sit in the list.
    deps.llm.assertConfigured();
    if (typeof definition.instructions !== 'string') {
      throw new ClinAgentError('VALIDATION_FAILED', `Agent "${definition.id}" builds its own prompt from structured input and cannot be started from text.`, { field: 'scenarioId' });
    }
    const state: DefinitionRunState = { input: request.input, messages: [{ role: 'system', content: definition.instructions }, { role: 'user', content: request.input }] };
    const conversationId = await logTurn(actor, request.conversationId, request.input, 'user', definition.id, request.projectId);
    const run = await createDefinitionRun(deps.db, { definitionId: definition.id, userId: actor.id, projectId: request.projectId, conversationId, state });
    await driver.enqueue(run.id);
    return run;
  }

  /**
   * Appends one turn to the run's conversation, starting one when the run has none yet; the conversation's id, or
   * undefined without a conversation store. The store checks the actor may still continue it.
   */
  async function logTurn(actor: User, conversationId: string | undefined | null, content: string, role: 'user' | 'assistant', scenarioId: string, projectId?: string | null): Promise<string | undefined> {
    if (!deps.conversations) return conversationId ?? undefined;
    const id = conversationId ?? (await deps.conversations.start({ actor, scenarioId, projectId: projectId ?? undefined, title: content })).id;
    await deps.conversations.append(id, [{ role, content }], actor);
    return id;
  }

  /**
   * What the saved step said to the person (the question it waits on, or its answer), logged after the commit: a
   * worker that dies in between leaves the turn in the run's own state but not in the log, never twice in the log.
   */
  async function logOutcome(run: DefinitionRun): Promise<void> {
    if (!deps.conversations || !deps.users || !run.conversationId || !run.userId) return;
    const said = run.status === 'SUSPENDED' ? (run.reviewRequest as { prompt?: unknown } | null)?.prompt : run.status === 'COMPLETED' ? stateOf(run).answer : undefined;
    if (typeof said !== 'string' || !said) return;
    const owner = await deps.users.get(run.userId);
    if (!owner) return;
    await logTurn(owner, run.conversationId, said, 'assistant', definitionIdOf(run), run.projectId).catch((error) => deps.logger.warn({ runId: run.id, err: errorMessage(error) }, 'agent run: its turn could not be logged in its conversation'));
  }

  /** Advances the run from its saved node (a job's work); undefined when it was not this worker's to run. */
  async function advance(runId: string): Promise<DefinitionRun | undefined> {
    return driver.advance<{ definition: AgentDefinition<string> | undefined; trace: TraceRun }>(runId, {
      async begin(run) {
        // A scenario file removed while its run waited: the run fails saying so, rather than its job retrying.
        const definition = deps.definitions.has(definitionIdOf(run)) ? deps.definitions.get(definitionIdOf(run)) : undefined;
        const trace = await deps.trace.start({ kind: 'agent_run', name: definitionIdOf(run), userId: run.userId ?? undefined, projectId: run.projectId ?? undefined, input: { runId, from: run.currentNode } });
        return { definition, trace };
      },
      execute: async (run, _node, { definition, trace }) => {
        if (!definition) return { step: { type: 'turn', outcome: 'error' }, update: { nextNode: 'end_error', status: 'FAILED', error: `agent "${definitionIdOf(run)}" is no longer defined on this server (was its scenario file removed?)` } };
        // A checkpoint a turn cannot start from would fail every retry the same way: the run ends saying why.
        const problems = stateProblems(run.state);
        if (problems.length) return { step: { type: 'turn', outcome: 'error', detail: { problems } }, update: { nextNode: 'end_error', status: 'FAILED', error: `this run's saved state cannot be read (${problems.join('; ')}); start a new run` } };
        try {
          return await runTurn(deps, definition, run, trace);
        } catch (error) {
          // A model outage (rate limited, timed out, unreachable) passes: the driver waits it out. Any other failure
          // of ours (the model unconfigured or refusing the request, a bad answer) would fail every retry the same
          // way, so the run ends saying why instead of sitting RUNNING while its job is retried.
          if (!ClinAgentError.isInstance(error) || isRetryableRunError(error)) throw error;
          return { step: { type: 'turn', outcome: 'error', detail: { code: error.code } }, update: { nextNode: 'end_error', status: 'FAILED', error: error.message } };
        }
      },
      endOf: (run, nodeId) => (nodeId === 'end_error' ? { status: 'FAILED', error: run.error ?? 'the run ended in end_error' } : { status: 'COMPLETED' }),
      // The model stayed down: the run fails where it was, with the person's reply kept in its messages, so a retry
      // (below) goes on from there once the model is back instead of asking them again.
      onModelUnavailable: (run, nodeId, error, attempts) => ({
        step: { type: MODEL_UNAVAILABLE_STEP, outcome: 'error', detail: { code: error.code, attempt: attempts } },
        update: { nextNode: nodeId, status: 'FAILED', state: withReplyApplied(run), error: `The model was unavailable on all ${attempts} attempts: ${error.message} Nothing you said is lost: retry the run (POST /api/agent/runs/${run.id}/retry) once the model is back.` },
      }),
      async finish({ trace }, run, error) {
        if (error) await trace.finish({ status: 'failed', error: errorMessage(error) });
        else await trace.finish({ status: run?.status === 'FAILED' ? 'failed' : 'success', output: run ? { status: run.status, node: run.currentNode } : { skipped: 'lease lost' } });
        if (!error && run) await logOutcome(run);
      },
    });
  }

  host.register({ prefix: DEFINITION_KIND_PREFIX, label: 'agent run', advance });

  return {
    start,
    advance,
    get: (id: string, actor: AgentRunActor) => owned(id, actor, 'read'),
    /** Per agent and user, newest first. Members see their own runs; an admin may name any user, or none for all. */
    async list(actor: AgentRunActor, filter: { agent?: string; user?: string; limit?: number; before?: { createdAt: Date; id: string } }): Promise<DefinitionRun[]> {
      const userId = actor.role === 'admin' ? filter.user : actor.id;
      if (actor.role !== 'admin' && filter.user && filter.user !== actor.id) {
        throw new ClinAgentError('FORBIDDEN', 'Only admins list the agent runs of another user. Leave user out to list yours.', { field: 'user' });
      }
      return listDefinitionRuns(deps.db, { definitionId: filter.agent, userId, limit: filter.limit ?? 50, before: filter.before });
    },
    /** The reply a waiting run asked for; the run goes on with it as the user's message. */
    async answer(id: string, actor: User, answer: string, shownDataHash?: string): Promise<DefinitionRun> {
      await owned(id, actor, 'act');
      const run = await driver.decide(id, { kind: 'answer', actor: actor.id, answer, shownDataHash });
      // Logged once the decision is taken: a refused answer (stale, twice) is not part of the conversation.
      if (run.conversationId) await logTurn(actor, run.conversationId, answer, 'user', definitionIdOf(run), run.projectId);
      return run;
    },
    async decide(id: string, actor: AgentRunActor & { name: string }, decision: 'approve' | 'reject', comment?: string, shownDataHash?: string): Promise<DefinitionRun> {
      await owned(id, actor, 'act');
      return driver.decide(id, { kind: decision, actor: actor.id, comment, shownDataHash });
    },
    /** A run that failed because the model was unavailable goes on from where it was, the person's reply included. */
    async retry(id: string, actor: AgentRunActor): Promise<DefinitionRun> {
      await owned(id, actor, 'act');
      const run = await reopenDefinitionRun(deps.db, id, actor.id, MODEL_UNAVAILABLE_STEP);
      await driver.enqueue(run.id);
      return run;
    },
    async cancel(id: string, actor: AgentRunActor): Promise<DefinitionRun> {
      await owned(id, actor, 'act');
      return definitionRunStore.cancel(deps.db, id, actor.id, 'cancelled by its user');
    },
  };
}

export type AgentRunService = ReturnType<typeof createAgentRunService>;
export { stateOf, definitionIdOf, type DefinitionRun };
