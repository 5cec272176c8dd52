import { z } from 'zod';
import { assertWriterRole } from '../../core/auth/project-access.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { defineQueue } from '../../core/jobs/queues.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { Logger } from '../../core/logger.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceRun, TraceStore } from '../../core/trace/store.js';
import type { ConversationStore } from '../conversations/index.js';
import type { AgentEventSink } from '../loop/events.js';
import type { RunReview } from '../runs/run-shape.js';
import { createStepDriver, type NodeResult } from '../runs/step-driver.js';
import { applyCardResult, stageCards } from './action-cards.js';
import type { StagedAgentConfig } from './config.js';
import type { ConfigStore } from './config-store.js';
import { mergeStageData } from './context-paths.js';
import type { CustomValidator } from './reflexion.js';
import { completeStage, handleMessage, stageOf, stageProgress } from './stage-steps.js';
import { createStagedRun, findStagedRun, INPUT_NODE, listStagedRuns, stagedAgentIdOf, stagedRunStore, stagedStateOf, updateWaitingState, type StagedRun } from './staged-runs.js';
import type { ActionCardPayload, StageCompleteResult, StagedChatResponse, StagedRunState } from './types.js';

/** Advances a staged conversation whose step was left unfinished (its process died mid-message): the orphan sweep queues it. */
export const advanceStagedRunQueue = defineQueue('staged-agent-advance', z.object({ runId: z.string().uuid() }), { retryLimit: 5, expireInSeconds: 15 * 60 });

export interface StagedAgentServiceDeps {
  db: Db;
  jobs?: Jobs;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  logger: Logger;
  workerId: string;
  leaseMs?: number;
  configs: ConfigStore;
  validators: Readonly<Record<string, CustomValidator>>;
  conversations: Pick<ConversationStore, 'start' | 'append'>;
  users: { get(id: string): Promise<User | undefined> };
}

export interface StagedView {
  run: StagedRun;
  state: StagedRunState;
  config: StagedAgentConfig;
  configVersion: number;
  actionCards: ActionCardPayload[];
}

/** How long a request waits for a step another worker took over (a recovering run) before telling the user to reload. */
const WAIT_FOR_OTHER_WORKER_MS = 120_000;

/**
 * Staged agents (seed 001): a conversation that walks a configured list of stages, collecting a structured context.
 * Each conversation is a durable run on the one step driver, waiting for input between messages, so it survives
 * restarts and continues from any device. Generic: the Protocol Agent is one configuration of it.
 */
export function createStagedAgentService(deps: StagedAgentServiceDeps) {
  const driver = createStepDriver({ store: stagedRunStore, db: deps.db, logger: deps.logger, workerId: deps.workerId, leaseMs: deps.leaseMs, queue: advanceStagedRunQueue, key: 'runId', jobs: deps.jobs, label: 'staged conversation' });
  const stepDeps = { llm: deps.llm, tools: deps.tools, validators: deps.validators };

  /** The conversation's run, if it is the actor's: anyone else gets the same 404 as for a missing id. */
  async function owned(agentId: string, conversationId: string, actor: Pick<User, 'id'>): Promise<StagedRun> {
    const run = await findStagedRun(deps.db, agentId, conversationId);
    if (!run || run.userId !== actor.id) {
      throw new ClinAgentError('NOT_FOUND', `Conversation "${conversationId}" does not exist. Check the id; a conversation is visible only to the user who started it.`, { conversationId });
    }
    return run;
  }

  async function view(run: StagedRun): Promise<StagedView> {
    const stored = await deps.configs.current(stagedAgentIdOf(run));
    const state = stagedStateOf(run);
    const stage = stageOf(stored.config, state.currentStage);
    return { run, state, config: stored.config, configVersion: stored.version, actionCards: state.finished ? [] : stageCards(stage, state.context, { conversationId: run.conversationId! }) };
  }

  /** Every node is `input`: the person's message (an answer) or their confirmation of the stage (an approval). */
  async function step(run: StagedRun, trace: TraceRun, onEvent?: AgentEventSink, signal?: AbortSignal): Promise<NodeResult<{ state?: StagedRunState }>> {
    const review = run.review as RunReview | null;
    const saved = stagedStateOf(run);
    const waitAgain = (state: StagedRunState, type: string, outcome: string, detail?: unknown): NodeResult<{ state?: StagedRunState }> => ({
      step: { type, outcome, next: INPUT_NODE, detail },
      update: { nextNode: INPUT_NODE, status: 'SUSPENDED', onApprove: INPUT_NODE, onReject: INPUT_NODE, reviewRequest: { awaiting: 'input' }, state: { ...state, traceIds: [...saved.traceIds, trace.traceId].slice(-200), updatedAt: new Date().toISOString() } },
    });
    if (!review) return waitAgain(saved, 'input', 'nothing_to_do');
    try {
      const stored = await deps.configs.current(stagedAgentIdOf(run));
      const input = { config: stored.config, configVersion: stored.version, state: { ...saved, configVersion: stored.version }, conversationId: run.conversationId!, trace };
      onEvent?.({ type: 'run_started', traceId: trace.traceId, conversationId: run.conversationId ?? undefined, runId: run.id });
      if (review.decision === 'answer') {
        const { state, response } = await handleMessage(stepDeps, { ...input, message: review.answer ?? '', onEvent, signal });
        return waitAgain({ ...state, lastError: undefined }, 'message', 'answered', { stage: saved.currentStage, currentStage: response.currentStage });
      }
      const { state, result } = await completeStage(stepDeps, input);
      return waitAgain({ ...state, lastError: undefined, last: { kind: 'complete', response: result } }, 'stage_complete', result.success ? 'pass' : 'blocked', { stage: result.previousStage, nextStage: result.nextStage, issues: result.issues });
    } catch (error) {
      // A model that is down or a stage an admin removed must not end the conversation: it waits again, the
      // message not taken, and the request that brought it gets the error.
      if (!ClinAgentError.isInstance(error)) throw error;
      return waitAgain({ ...saved, last: undefined, lastError: { code: error.code, message: error.message } }, review.decision === 'answer' ? 'message' : 'stage_complete', 'error', { code: error.code });
    }
  }

  /** Runs the step the person's input queued, here, streaming to them; a run another worker took is waited for. */
  async function advanceHere(runId: string, onEvent?: AgentEventSink, signal?: AbortSignal): Promise<StagedRun> {
    const saved = await advance(runId, onEvent, signal);
    if (saved) return saved;
    const deadline = Date.now() + WAIT_FOR_OTHER_WORKER_MS;
    while (Date.now() < deadline) {
      const run = await stagedRunStore.get(deps.db, runId);
      if (run && run.status !== 'RUNNING' && run.status !== 'PENDING') return run;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new ClinAgentError('CONFLICT_STATE', 'Your message is being answered by another server process; reload the conversation in a moment to see the answer.', { runId });
  }

  async function advance(runId: string, onEvent?: AgentEventSink, signal?: AbortSignal): Promise<StagedRun | undefined> {
    return driver.advance<TraceRun>(runId, {
      begin: (run) => deps.trace.start({ kind: 'staged_agent', name: stagedAgentIdOf(run), userId: run.userId ?? undefined, projectId: run.projectId ?? undefined, input: { conversationId: run.conversationId, stage: stagedStateOf(run).currentStage } }),
      execute: (run, _node, trace) => step(run, trace, onEvent, signal),
      async finish(trace, run, error) {
        const last = run ? stagedStateOf(run).last : undefined;
        await trace.finish(error ? { status: 'failed', error: errorMessage(error) } : { status: 'success', output: last ? { kind: last.kind } : undefined });
        if (!error && run && last?.kind === 'message') await logExchange(run);
      },
    });
  }

  /** The message and the reply in the conversation log, after the step is saved (lists and the conversation page read it). */
  async function logExchange(run: StagedRun): Promise<void> {
    const state = stagedStateOf(run);
    const [asked, answered] = state.history.slice(-2);
    const owner = run.userId ? await deps.users.get(run.userId) : undefined;
    if (!owner || !asked || !answered || !run.conversationId) return;
    await deps.conversations
      .append(run.conversationId, [{ role: 'user', content: asked.content }, { role: 'assistant', content: answered.content, traceId: state.last?.kind === 'message' ? state.last.response.traceId : undefined }], owner)
      .catch((error) => deps.logger.warn({ runId: run.id, err: errorMessage(error) }, 'staged conversation: the exchange could not be logged in its conversation'));
  }

  /** The person's input, recorded on the waiting run (a second input at once is refused: one message at a time). */
  async function give(run: StagedRun, actor: User, input: { kind: 'answer'; answer: string } | { kind: 'approve' }): Promise<void> {
    assertWriterRole(actor);
    if (run.status !== 'SUSPENDED') {
      throw new ClinAgentError('CONFLICT_STATE', 'The previous message of this conversation is still being answered; wait for its answer, then send this again.', { conversationId: run.conversationId });
    }
    await stagedRunStore.decide(deps.db, run.id, { ...input, actor: actor.id });
  }

  function outcomeOf<K extends 'message' | 'complete'>(run: StagedRun, kind: K): K extends 'message' ? StagedChatResponse : StageCompleteResult {
    const state = stagedStateOf(run);
    if (state.lastError && !state.last) throw new ClinAgentError(state.lastError.code as never, state.lastError.message);
    if (state.last?.kind !== kind) throw new ClinAgentError('INTERNAL', `The conversation's last step was not a ${kind}; reload it.`);
    return state.last.response as never;
  }

  return {
    /** Starts a conversation of the staged agent at its first stage. */
    async start(actor: User, agentId: string, request: { title?: string; projectId?: string }): Promise<StagedView> {
      // Viewers read only, here as in the routes: a route that forgot its access would still change nothing.
      assertWriterRole(actor);
      const { config } = await deps.configs.current(agentId);
      const title = request.title?.trim() || `${config.agentName} ${new Date().toISOString().slice(0, 10)}`;
      const conversation = await deps.conversations.start({ actor, scenarioId: agentId, projectId: request.projectId, title });
      const now = new Date().toISOString();
      const state: StagedRunState = { agentId, title, currentStage: config.stages[0]!.stageId, finished: false, completedStages: [], context: Object.fromEntries(config.stages.map((s) => [s.contextField, {}])), history: [], traceIds: [], updatedAt: now };
      const run = await createStagedRun(deps.db, { agentId, userId: actor.id, projectId: request.projectId, conversationId: conversation.id, state });
      return view(run);
    },
    async get(actor: User, agentId: string, conversationId: string): Promise<StagedView> {
      return view(await owned(agentId, conversationId, actor));
    },
    /** The actor's conversations with the agent, most recently active first. */
    async list(actor: User, agentId: string): Promise<Array<{ conversationId: string; state: StagedRunState; updatedAt: Date }>> {
      const runs = await listStagedRuns(deps.db, agentId, actor.id);
      return runs.filter((run) => run.conversationId).map((run) => ({ conversationId: run.conversationId!, state: stagedStateOf(run), updatedAt: run.updatedAt }));
    },
    /**
     * One message; `attachments` (references the user attached: file names, links, document ids) travel with it as
     * a declared data block, so the stage can take them into account without reading them as instructions.
     */
    async message(actor: User, agentId: string, conversationId: string, message: string, options: { onEvent?: AgentEventSink; signal?: AbortSignal; attachments?: string[] } = {}): Promise<StagedChatResponse> {
      deps.llm.assertConfigured();
      const run = await owned(agentId, conversationId, actor);
      const text = options.attachments?.length ? `${message}\n\n${dataBlock('attachments', options.attachments)}` : message;
      await give(run, actor, { kind: 'answer', answer: text });
      return outcomeOf(await advanceHere(run.id, options.onEvent, options.signal), 'message');
    },
    async completeStage(actor: User, agentId: string, conversationId: string): Promise<StageCompleteResult> {
      const run = await owned(agentId, conversationId, actor);
      if (stagedStateOf(run).finished) {
        throw new ClinAgentError('CONFLICT_STATE', 'Every stage of this conversation is complete already. You can still edit what it recorded, ask questions and export it.', { conversationId });
      }
      await give(run, actor, { kind: 'approve' });
      return outcomeOf(await advanceHere(run.id), 'complete');
    },
    /**
     * An edit in the state panel: `value`'s keys are added to one context field. The field must be a stage's and
     * each key one its extraction schema declares, so a typo is a 400 naming it rather than data nobody reads.
     */
    async patchContext(actor: User, agentId: string, conversationId: string, field: string, value: Record<string, unknown>): Promise<StagedView> {
      const run = await owned(agentId, conversationId, actor);
      const current = await view(run);
      const stage = current.config.stages.find((s) => s.contextField === field);
      if (!stage) {
        throw new ClinAgentError('VALIDATION_FAILED', `field: "${field}" is not a context field; use one of ${current.config.stages.map((s) => s.contextField).join(', ')}.`, { field: 'field' });
      }
      const known = Object.keys(((stage.extractionSchema as { properties?: Record<string, unknown> }).properties) ?? {});
      const unknown = Object.keys(value).filter((key) => !known.includes(key));
      if (unknown.length) {
        throw new ClinAgentError('VALIDATION_FAILED', `value: ${unknown.map((k) => `"${k}"`).join(', ')} ${unknown.length > 1 ? 'are not keys' : 'is not a key'} of ${field}; its keys are ${known.join(', ')}.`, { field: `value.${unknown[0]}` });
      }
      const problems = valueProblems(stage.extractionSchema, value);
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `value: ${problems.join('; ')}.`, { field: 'value', problems });
      const state: StagedRunState = { ...current.state, context: { ...current.state.context, [field]: mergeStageData(current.state.context[field] ?? {}, value) }, updatedAt: new Date().toISOString() };
      return view(await saveWaiting(run, state, actor, 'context_edited', { field, keys: Object.keys(value) }));
    },
    /** A card's result (the calculator's answer) recorded through its resultMapping. */
    async actionCallback(actor: User, agentId: string, conversationId: string, cardId: string, result: Record<string, unknown>): Promise<{ applied: Record<string, unknown>; view: StagedView }> {
      const run = await owned(agentId, conversationId, actor);
      const current = await view(run);
      const card = current.config.stages.flatMap((s) => s.actionCards).find((c) => c.cardId === cardId);
      if (!card) {
        throw new ClinAgentError('VALIDATION_FAILED', `cardId: "${cardId}" is not a card of this agent; its cards are ${current.config.stages.flatMap((s) => s.actionCards.map((c) => c.cardId)).join(', ') || '(none)'}.`, { field: 'cardId' });
      }
      const applied = applyCardResult(card, result, current.state.context);
      const state: StagedRunState = { ...current.state, context: applied.context as StagedRunState['context'], updatedAt: new Date().toISOString() };
      return { applied: applied.applied, view: await view(await saveWaiting(run, state, actor, 'card_result', { cardId, paths: Object.keys(applied.applied) })) };
    },
    stageProgress: (v: StagedView) => stageProgress(v.config, v.state),
    advance,
    async registerWorkers(options: { concurrency: number; sweepIntervalMs: number; staleMs: number }): Promise<{ sweep(): Promise<number>; stop(): void }> {
      const jobs = deps.jobs;
      if (!jobs) throw new ClinAgentError('INTERNAL', 'Staged-agent workers need job queues; create the context with startJobs: true.');
      for (let i = 0; i < options.concurrency; i++) await jobs.work(advanceStagedRunQueue, async ({ runId }) => void (await advance(runId)), { batchSize: 1, pollingIntervalSeconds: 0.5 });
      return driver.startSweep({ intervalMs: options.sweepIntervalMs, staleMs: options.staleMs });
    },
  };

  async function saveWaiting(run: StagedRun, state: StagedRunState, actor: User, action: string, audit: unknown): Promise<StagedRun> {
    assertWriterRole(actor);
    const saved = await updateWaitingState(deps.db, run, state, { actor: actor.id, action, newValue: audit });
    if (!saved) {
      throw new ClinAgentError('CONFLICT_STATE', 'The conversation changed while you edited it (a message is being answered, or another edit was saved). Reload it and make the edit again.', { conversationId: run.conversationId });
    }
    return saved;
  }
}

/** The types the stage's schema gives its top-level keys, checked for an edit (the model's output is checked by extraction). */
function valueProblems(schema: Record<string, unknown>, value: Record<string, unknown>): string[] {
  const properties = ((schema as { properties?: Record<string, { type?: string | string[] }> }).properties) ?? {};
  const problems: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const declared = properties[key]?.type;
    if (!declared || v === null) continue;
    const types = Array.isArray(declared) ? declared : [declared];
    const actual = Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
    const ok = types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
    if (!ok) problems.push(`${key} must be ${types.join(' or ')}, got ${actual}`);
  }
  return problems;
}

export type StagedAgentService = ReturnType<typeof createStagedAgentService>;
