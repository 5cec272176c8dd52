import { z } from 'zod';
import type { User } from '../../core/auth/users.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { AgentRegistry } from '../definitions/registry.js';
import { selectConversation } from '../conversations/conversation-queries.js';
import type { AgentEventSink } from '../loop/events.js';
import { createConversationRuns, type ConversationRun, type ConversationRunDeps } from '../runs/conversation-runs.js';
import { applyCardResult, stageCards } from './action-cards.js';
import type { StagedAgentConfig } from './config.js';
import type { ConfigStore } from './config-store.js';
import { appliedValueProblems, computedCardResult } from './card-results.js';
import { mergeStageData } from './context-paths.js';
import { contextValueProblems } from './context-values.js';
import type { CustomValidator } from './reflexion.js';
import { registeredStagedAgent } from './stage-definition.js';
import { completeStage, handleMessage, stageOf, stageProgress, unansweredMessage } from './stage-steps.js';
import type { ActionCardPayload, StageCompleteResult, StagedChatResponse, StagedRunState } from './types.js';

interface StagedAgentServiceDeps extends ConversationRunDeps {
  llm: LlmGateway;
  tools: ToolRegistry;
  configs: ConfigStore;
  validators: Readonly<Record<string, CustomValidator>>;
  /** The registry the staged agents' stage turns and the one-round agents of a step (reflexion) are resolved from. */
  agents: Pick<AgentRegistry, 'get' | 'has'>;
}

export type StagedRun = ConversationRun;

/**
 * One message to a staged agent as its run stores it: the text, with the references the user attached as a
 * declared data block. Conversations whose message was taken before the input was typed kept the text alone.
 */
const StagedInput = z.object({ text: z.string().min(1) });
type StagedInput = z.infer<typeof StagedInput>;
const StoredStagedInput = z.union([StagedInput, z.string().min(1).transform((text) => ({ text }))]);

export interface StagedView {
  run: StagedRun;
  state: StagedRunState;
  config: StagedAgentConfig;
  configVersion: number;
  actionCards: ActionCardPayload[];
}

/**
 * Staged agents (seed 001): a conversation that walks a configured list of stages, collecting a structured context.
 * Each conversation is a durable conversation run (agent/runs/conversation-runs.ts): a message is an answer, the
 * user confirming the stage an approval. Generic: the Protocol Agent is one configuration of it.
 */
export function createStagedAgentService(deps: StagedAgentServiceDeps) {
  const stepDeps = { llm: deps.llm, tools: deps.tools, validators: deps.validators, agents: deps.agents };
  /** The configuration each agent's last step used: `recover` answers with its stages and cards, and cannot wait for the store. */
  const configInUse = new Map<string, StagedAgentConfig>();
  const runs = createConversationRuns<StagedRunState, StagedInput>({
    ...deps,
    kindPrefix: 'staged:',
    input: StoredStagedInput,
    label: 'Conversation',
    traceKind: 'staged_agent',
    auditStep: (step) => (step.type === 'stage_complete' && step.outcome === 'pass' ? 'stage_completed' : undefined),
    traceInput: (_run, state) => ({ stage: state.currentStage }),
    async step(run, { given, state, trace, onEvent, signal }) {
      const stored = await deps.configs.current(runs.agentIdOf(run));
      configInUse.set(runs.agentIdOf(run), stored.config);
      const input = { config: stored.config, configVersion: stored.version, state: { ...state, configVersion: stored.version }, conversationId: run.conversationId!, trace };
      if (given.kind === 'answer') {
        const done = await handleMessage(stepDeps, { ...input, message: given.input.text, onEvent, signal });
        return { state: done.state, type: 'message', outcome: 'answered', detail: { stage: state.currentStage, currentStage: done.response.currentStage } };
      }
      const done = await completeStage(stepDeps, input);
      return { state: { ...done.state, last: { kind: 'complete', response: done.result } }, type: 'stage_complete', outcome: done.result.success ? 'pass' : 'blocked', detail: { stage: done.result.previousStage, nextStage: done.result.nextStage, issues: done.result.issues } };
    },
    // A message the model could not answer (down, busy, too slow) is answered by us: the user reads what happened in
    // a plain sentence, nothing is recorded from it, and the conversation takes the next message. A stage
    // confirmation that failed (a prompt-based rule's judge was down) stays an error: nothing was decided.
    recover(run, { given, state, error, trace }) {
      const config = configInUse.get(runs.agentIdOf(run));
      if (given.kind !== 'answer' || !config || !ClinAgentError.isInstance(error) || !error.code.startsWith('LLM_')) return undefined;
      const next = unansweredMessage({ config, state, conversationId: run.conversationId!, traceId: trace.traceId }, given.input.text, error.message);
      return { state: next, type: 'message', outcome: 'unanswered', detail: { stage: state.currentStage, error: error.code } };
    },
    exchangeOf(state) {
      if (state.last?.kind !== 'message') return undefined;
      const [asked, answered] = state.history.slice(-2);
      return asked && answered ? { asked: asked.content, answered: answered.content, traceId: state.last.response.traceId } : undefined;
    },
  });

  async function view(run: StagedRun): Promise<StagedView> {
    const stored = await deps.configs.current(runs.agentIdOf(run));
    const state = runs.stateOf(run);
    const stage = stageOf(stored.config, state.currentStage);
    return { run, state, config: stored.config, configVersion: stored.version, actionCards: state.finished ? [] : stageCards(stage, state.context, { conversationId: run.conversationId! }) };
  }

  async function start(actor: User, agentId: string, request: { title?: string; projectId?: string; conversationId?: string }): Promise<StagedView> {
    // Refused before anything is stored: a conversation of an agent the registry does not hold could never be answered.
    registeredStagedAgent(deps.agents, agentId);
    const { config } = await deps.configs.current(agentId);
    const title = request.title?.trim() || `${config.agentName} ${new Date().toISOString().slice(0, 10)}`;
    const conversation = await deps.conversations.start({ id: request.conversationId, actor, scenarioId: agentId, projectId: request.projectId, title });
    const state: StagedRunState = { agentId, title, currentStage: config.stages[0]!.stageId, finished: false, completedStages: [], context: Object.fromEntries(config.stages.map((s) => [s.contextField, {}])), history: [], traceIds: [], updatedAt: new Date().toISOString() };
    return view(await runs.create(actor, { agentId, projectId: request.projectId, conversationId: conversation.id, state }));
  }

  /**
   * The actor's conversation; an id nobody has used yet starts one for them under that id (the seed's page names
   * its conversation before the first message). An id in use by anyone else stays a 404, as for any id one may not see.
   */
  async function ownedOrStarted(actor: User, agentId: string, conversationId: string): Promise<StagedRun> {
    try {
      return await runs.owned(agentId, conversationId, actor);
    } catch (error) {
      if (!(ClinAgentError.isInstance(error) && error.code === 'NOT_FOUND')) throw error;
      if (!isUuid(conversationId) || (await selectConversation(deps.db, conversationId))) throw error;
      try {
        return (await start(actor, agentId, { conversationId })).run;
      } catch (startError) {
        // Started meanwhile by a second request of the same page (or taken by someone else): whoever owns it now.
        if (await selectConversation(deps.db, conversationId)) return runs.owned(agentId, conversationId, actor);
        throw startError;
      }
    }
  }

  function lastOf<K extends 'message' | 'complete'>(run: StagedRun, kind: K): K extends 'message' ? StagedChatResponse : StageCompleteResult {
    const last = runs.stateOf(run).last;
    if (last?.kind !== kind) throw new ClinAgentError('INTERNAL', `The conversation's last step was not a ${kind}; reload it.`);
    return last.response as never;
  }

  return {
    /** Starts a conversation of the staged agent at its first stage. */
    start: (actor: User, agentId: string, request: { title?: string; projectId?: string }) => start(actor, agentId, request),
    /** The actor's conversation; an unused id (a UUID the client chose) starts one. */
    async open(actor: User, agentId: string, conversationId: string): Promise<StagedView> {
      return view(await ownedOrStarted(actor, agentId, conversationId));
    },
    async get(actor: User, agentId: string, conversationId: string): Promise<StagedView> {
      return view(await runs.owned(agentId, conversationId, actor));
    },
    /** The actor's conversations with the agent, most recently active first. */
    async list(actor: User, agentId: string): Promise<Array<{ conversationId: string; state: StagedRunState; updatedAt: Date }>> {
      return (await runs.list(agentId, actor)).filter((run) => run.conversationId).map((run) => ({ conversationId: run.conversationId!, state: runs.stateOf(run), updatedAt: run.updatedAt }));
    },
    /**
     * One message; `attachments` (references the user attached: file names, links, document ids) travel with it as
     * a declared data block, so the stage can take them into account without reading them as instructions.
     */
    async message(actor: User, agentId: string, conversationId: string, message: string, options: { onEvent?: AgentEventSink; signal?: AbortSignal; attachments?: string[] } = {}): Promise<StagedChatResponse> {
      deps.llm.assertConfigured();
      const run = await ownedOrStarted(actor, agentId, conversationId);
      const text = options.attachments?.length ? `${message}\n\n${dataBlock('attachments', options.attachments)}` : message;
      return lastOf(await runs.take(run, actor, { kind: 'answer', input: { text } }, options), 'message');
    },
    async completeStage(actor: User, agentId: string, conversationId: string): Promise<StageCompleteResult> {
      const run = await runs.owned(agentId, conversationId, actor);
      if (runs.stateOf(run).finished) {
        throw new ClinAgentError('CONFLICT_STATE', 'Every stage of this conversation is complete already. You can still edit what it recorded, ask questions and export it.', { conversationId });
      }
      return lastOf(await runs.take(run, actor, { kind: 'approve' }), 'complete');
    },
    /**
     * An edit in the state panel: `value`'s keys are added to one context field. The field must be a stage's and
     * each key one its extraction schema declares, so a typo is a 400 naming it rather than data nobody reads.
     */
    async patchContext(actor: User, agentId: string, conversationId: string, field: string, value: Record<string, unknown>): Promise<StagedView> {
      const run = await ownedOrStarted(actor, agentId, conversationId);
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
      const problems = contextValueProblems(stage.extractionSchema, value);
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `value: ${problems.join('; ')}.`, { field: 'value', problems });
      const state: StagedRunState = { ...current.state, context: { ...current.state.context, [field]: mergeStageData(current.state.context[field] ?? {}, value) }, updatedAt: new Date().toISOString() };
      return view(await runs.saveWaiting(run, state, actor, { action: 'context_edited', newValue: { field, keys: Object.keys(value) } }));
    },
    /** A card's result (the calculator's answer) recorded through its resultMapping. */
    async actionCallback(actor: User, agentId: string, conversationId: string, cardId: string, result: Record<string, unknown>): Promise<{ applied: Record<string, unknown>; view: StagedView }> {
      const run = await ownedOrStarted(actor, agentId, conversationId);
      const current = await view(run);
      const card = current.config.stages.flatMap((s) => s.actionCards).find((c) => c.cardId === cardId);
      if (!card) {
        throw new ClinAgentError('VALIDATION_FAILED', `cardId: "${cardId}" is not a card of this agent; its cards are ${current.config.stages.flatMap((s) => s.actionCards.map((c) => c.cardId)).join(', ') || '(none)'}.`, { field: 'cardId' });
      }
      // A result a tool computes is recorded as the tool computes it from the inputs, never as sent.
      const recorded = card.resultTool ? await computedCardResult(deps.tools, card, result) : result;
      const applied = applyCardResult(card, recorded, current.state.context);
      const problems = appliedValueProblems(current.config.stages, card, applied.applied);
      if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `${problems.join('; ')}.`, { field: 'result', problems });
      const state: StagedRunState = { ...current.state, context: applied.context as StagedRunState['context'], updatedAt: new Date().toISOString() };
      return { applied: applied.applied, view: await view(await runs.saveWaiting(run, state, actor, { action: 'card_result', newValue: { cardId, paths: Object.keys(applied.applied) } })) };
    },
    stageProgress: (v: StagedView) => stageProgress(v.config, v.state),
    /** The runs' store (tests read and decide runs through it, as a process that died mid-message would have). */
    runs,
  };
}

export type StagedAgentService = ReturnType<typeof createStagedAgentService>;
