import type { AgentRegistry } from '../definitions/registry.js';
import type { LlmGateway } from '../../core/llm/gateway.js';
import type { ToolRegistry } from '../../core/tools/registry.js';
import type { TraceScope } from '../../core/trace/store.js';
import { ClinAgentError } from '../../core/errors.js';
import type { AgentEventSink } from '../loop/events.js';
import { runDefinition } from '../loop/run-definition.js';
import { stageCards } from './action-cards.js';
import { calculatingCards } from './card-results.js';
import type { StagedAgentConfig, StageConfig } from './config.js';
import { conditionHolds } from './context-logic.js';
import { isPresent, keyWords } from './context-paths.js';
import { createExtractedDataFilter } from './extracted-data-filter.js';
import { createPlan } from './planner.js';
import { buildSystemPrompt, historyMessages } from './prompt.js';
import { analyzeQuery } from './query-analysis.js';
import { reflect, type CustomValidator, type ReflexionResult } from './reflexion.js';
import { registeredStagedAgent, stageTurnDefinition } from './stage-definition.js';
import { MAX_REPLY_CHARS, recordTurn } from './turn-record.js';
import type { StageCompleteResult, StagedChatResponse, StagedRunState, StageProgress } from './types.js';

export interface StageStepDeps {
  llm: LlmGateway;
  tools: ToolRegistry;
  validators: Readonly<Record<string, CustomValidator>>;
  /** The registry a stage turn's definition (the staged agent) and the reflexion definition are resolved from. */
  agents: Pick<AgentRegistry, 'get' | 'has'>;
}

export interface StepInput {
  config: StagedAgentConfig;
  configVersion: number;
  state: StagedRunState;
  conversationId: string;
  trace: TraceScope;
}

export function stageOf(config: StagedAgentConfig, stageId: string): StageConfig {
  const stage = config.stages.find((s) => s.stageId === stageId);
  if (!stage) {
    throw new ClinAgentError('CONFLICT_STATE', `This conversation is at stage "${stageId}", which the configuration in use no longer has (stages: ${config.stages.map((s) => s.stageId).join(', ')}). An admin can restore the stage.`, { stageId });
  }
  return stage;
}

export function stageProgress(config: StagedAgentConfig, state: Pick<StagedRunState, 'currentStage' | 'completedStages'>): StageProgress {
  return { current: config.stages.findIndex((s) => s.stageId === state.currentStage) + 1, total: config.stages.length, completedStages: [...state.completedStages] };
}

/**
 * One message through the pipeline of seed 001: query analysis, planning, execution (the stage's turn on the one
 * loop), extraction, reflexion and the response, each a span of the message's trace. What the model says it
 * extracted is recorded only when the user said it or a tool computed it (extraction.ts).
 */
export async function handleMessage(deps: StageStepDeps, input: StepInput & { message: string; onEvent?: AgentEventSink; signal?: AbortSignal }): Promise<{ state: StagedRunState; response: StagedChatResponse }> {
  const { config, trace, message } = input;
  let state = input.state;
  const stage = stageOf(config, state.currentStage);
  const query = await trace.span('step', 'query_analysis', { message, stage: stage.stageId }, async () => analyzeQuery(message, stage), (q) => ({ output: q }));
  const plan = await trace.span('step', 'planning', { intent: query.intent, stage: stage.stageId }, async () => createPlan(query, stage), (p) => ({ output: p }));

  const filters = new Map<number, ReturnType<typeof createExtractedDataFilter>>();
  // The reply is cut at MAX_REPLY_CHARS (turn-record.ts); a runaway answer streams no further than the reply shows.
  const streamed = new Map<number, number>();
  const send = (round: number, text: string) => {
    const sent = streamed.get(round) ?? 0;
    const piece = text.slice(0, Math.max(0, MAX_REPLY_CHARS - sent));
    if (!piece) return;
    streamed.set(round, sent + piece.length);
    input.onEvent!({ type: 'text_delta', round, text: piece });
  };
  const onEvent: AgentEventSink | undefined = input.onEvent && ((event) => {
    if (event.type === 'round_finished') {
      // What the filter held back to see whether a tag began (a trailing fence, a space) is the round's own text.
      const rest = filters.get(event.round)?.end();
      if (rest) send(event.round, rest);
      return input.onEvent!(event);
    }
    if (event.type !== 'text_delta') return input.onEvent!(event);
    // The <extracted_data> block is for us, not the reader: it is held back as it streams.
    const filter = filters.get(event.round) ?? filters.set(event.round, createExtractedDataFilter()).get(event.round)!;
    const text = filter.push(event.text);
    if (text) send(event.round, text);
  });
  const outcome = await trace.span('step', 'execution', { strategy: plan.strategy, stage: stage.stageId, tools: stage.availableToolIds }, () =>
    runDefinition(stageTurnDefinition(registeredStagedAgent(deps.agents, config.agentId), config, stage, input.configVersion), {
      llm: deps.llm,
      trace,
      registry: stage.availableToolIds.length ? deps.tools : undefined,
      input: { system: buildSystemPrompt(config, stage, state.context, plan), history: historyMessages(config, state.history), message },
      onEvent,
      signal: input.signal,
    }), (o) => ({ output: { kind: o.kind, toolCalls: o.toolCalls.map((c) => ({ tool: c.toolName, success: c.success })) } }));
  // What the turn records (the tools' results, the data block's grounded values) and says, as one step of the trace.
  const turn = await trace.span('step', 'extraction', { stage: stage.stageId, field: stage.contextField }, async () => recordTurn(stage, state, outcome, { message, shouldExtract: plan.shouldExtract }), (t) => ({ output: { ...t.extraction, recordedFromTools: t.recordedFromTools, issues: t.issues } }));
  state = { ...state, context: turn.context };
  const shown = turn.message;
  const contextUpdate = turn.contextUpdate;
  const issues: string[] = [...turn.issues];
  if (turn.contextUpdate && plan.shouldReflect) {
    const checked = await runReflexion(deps, input, stage, state.context[stage.contextField] ?? {}, 'on_extract');
    issues.push(...checked.issues);
  }

  let completion: StageCompleteResult | undefined;
  if (plan.tryTransition && !state.finished && wantsTransition(stage, state, plan.strategy)) {
    const moved = await completeStage(deps, { ...input, state });
    state = moved.state;
    completion = moved.result;
    // Automatic transitions are tried on every message: only a user who asked to move on hears what blocks it;
    // the warnings of a stage that did move on are always told.
    if (completion.success || plan.strategy === 'transition_stage') issues.push(...(completion.issues ?? []));
  }

  const now = stageOf(config, state.currentStage);
  const response = await trace.span('step', 'response', { stage: state.currentStage }, async (): Promise<StagedChatResponse> => ({
    traceId: trace.traceId,
    message: shown,
    actionCards: completion?.success ? completion.nextStageActionCards ?? [] : stageCards(now, state.context, { conversationId: input.conversationId, includeManual: plan.strategy === 'trigger_tool' }),
    contextUpdate,
    currentStage: state.currentStage,
    stageStatus: state.finished ? 'completed' : 'in_progress',
    stageProgress: stageProgress(config, state),
    issues: [...new Set(issues)],
  }), (r) => ({ output: { currentStage: r.currentStage, cards: r.actionCards.map((c) => c.cardId), issues: r.issues } }));

  state = {
    ...state,
    history: [...state.history, { role: 'user', content: message, stageId: stage.stageId }, { role: 'assistant', content: shown, stageId: stage.stageId }],
    last: { kind: 'message', response },
  };
  return { state, response };
}

/**
 * The state after a message the model could not answer: the exchange is in the history (so the model reads the
 * user's words next time, and the conversation log has them) with our plain notice as the reply; the context is
 * unchanged. `reason` is the error's message for people (never the endpoint or the provider's text).
 */
export function unansweredMessage(input: { config: StagedAgentConfig; state: StagedRunState; conversationId: string; traceId: string }, message: string, reason: string): StagedRunState {
  const { config, state } = input;
  const shown = `${reason} This message was not answered and nothing was recorded from it; send it again.`;
  const stage = config.stages.find((s) => s.stageId === state.currentStage);
  const response: StagedChatResponse = {
    traceId: input.traceId,
    message: shown,
    actionCards: stage && !state.finished ? stageCards(stage, state.context, { conversationId: input.conversationId }) : [],
    contextUpdate: null,
    currentStage: state.currentStage,
    stageStatus: state.finished ? 'completed' : 'in_progress',
    stageProgress: stageProgress(config, state),
    issues: [],
  };
  return {
    ...state,
    history: [...state.history, { role: 'user', content: message, stageId: state.currentStage }, { role: 'assistant', content: shown, stageId: state.currentStage }],
    last: { kind: 'message', response },
  };
}

/** auto moves on once the stage is complete; condition once its condition holds too; a user asking to move on, always tried. */
function wantsTransition(stage: StageConfig, state: StagedRunState, strategy: string): boolean {
  if (strategy === 'transition_stage') return true;
  if (stage.transitionMode === 'auto') return true;
  if (stage.transitionMode === 'condition') return Boolean(stage.transitionCondition && conditionHolds(stage.transitionCondition, state.context).holds);
  return false;
}

async function runReflexion(deps: StageStepDeps, input: StepInput, stage: StageConfig, stageData: Record<string, unknown>, timing: 'on_extract' | 'on_complete'): Promise<ReflexionResult> {
  return input.trace.span('step', 'reflexion', { stage: stage.stageId, timing }, () =>
    reflect({ rules: input.config.reflexionRules, timing, stage, stageData }, { llm: deps.llm, trace: input.trace, model: input.config.defaultModel, validators: deps.validators, agents: deps.agents }), (r) => ({ output: r }));
}

/**
 * The user confirms the stage (or an automatic transition tries it): the on_complete rules run; a blocking failure
 * keeps the stage and names each missing item, otherwise the next stage begins with its cards.
 */
export async function completeStage(deps: StageStepDeps, input: StepInput): Promise<{ state: StagedRunState; result: StageCompleteResult }> {
  const { config, state } = input;
  const stage = stageOf(config, state.currentStage);
  const stageData = state.context[stage.contextField] ?? {};
  const checked = await runReflexion(deps, input, stage, stageData, 'on_complete');
  if (checked.blockTransition) {
    return { state, result: { success: false, issues: checked.issues, suggestions: checked.suggestions, previousStage: stage.stageId } };
  }
  const completedStages = state.completedStages.includes(stage.stageId) ? state.completedStages : [...state.completedStages, stage.stageId];
  const warnings = checked.issues.length ? { issues: checked.issues } : {};
  const summary = summarize(stage, stageData);
  if (!stage.nextStageId) {
    const next: StagedRunState = { ...state, completedStages, finished: true };
    return { state: next, result: { success: true, ...warnings, suggestions: checked.suggestions, previousStage: stage.stageId, summary } };
  }
  const nextStage = stageOf(config, stage.nextStageId);
  const next: StagedRunState = { ...state, completedStages, currentStage: nextStage.stageId };
  return {
    state: next,
    result: { success: true, ...warnings, suggestions: checked.suggestions, previousStage: stage.stageId, nextStage: nextStage.stageId, summary, nextStageActionCards: stageCards(nextStage, next.context, { conversationId: input.conversationId }) },
  };
}

/**
 * "Stage name: key: value; key.sub: value" of what the stage recorded, for the completion message (people read it).
 * A tool's inputs, kept only to pre-fill its card again, are left out: the method and assumptions say them in words.
 */
function summarize(stage: StageConfig, data: Record<string, unknown>): string {
  const toolInputs = new Set(calculatingCards(stage).flatMap((card) => Object.entries(card.resultMapping!).filter(([key]) => key === 'inputs').map(([, path]) => path.split('.').slice(1).join('.'))));
  const shown = Object.fromEntries(Object.entries(data).filter(([key]) => !toolInputs.has(key)));
  return `${stage.stageName}: ${readable(shown).join('; ') || 'nothing recorded'}`;
}

function readable(value: unknown, path = ''): string[] {
  if (!isPresent(value)) return [];
  if (Array.isArray(value)) {
    const items = value.map((item) => (item && typeof item === 'object' ? ((item as { text?: unknown; name?: unknown }).text ?? (item as { name?: unknown }).name ?? JSON.stringify(item)) : item));
    return [`${path}: ${items.join(', ')}`];
  }
  // Keys as words ("per group", not perGroup): the summary is read by people, not by code.
  if (typeof value === 'object') return Object.entries(value as Record<string, unknown>).flatMap(([key, v]) => readable(v, path ? `${path} ${keyWords(key)}` : keyWords(key)));
  return [`${path}: ${String(value)}`];
}
