import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { clipLongText, type LlmGateway } from '../../core/llm/gateway.js';
import type { ChatMessage, ChatResponse, ToolCallRequest, ToolSpec } from '../../core/llm/types.js';
import { countTokens } from '../../core/tokenizer.js';
import type { ToolCallResult, ToolRegistry } from '../../core/tools/registry.js';
import type { TraceScope } from '../../core/trace/store.js';
import { readDecision, type DecisionMode } from './decisions.js';
import type { AnswerCheck, AnswerText } from '../definitions/answer-schema.js';
import type { ParsedAs } from '../../core/structured/parse.js';
import type { AgentEventSink } from './events.js';
import type { LoopProgress, StopCondition, StopReason } from './stop-conditions.js';

/**
 * The one think -> act -> observe loop. runAgent, soft rules and every later agent run on it; they differ by
 * configuration and small hooks, never by a copy of the loop:
 * - the model answers either by native function calling or with a JSON decision (`{"action": "use_tool"}`,
 *   seed 003), read through the shared tolerant parser;
 * - only the allowed tools run; a call to any other registered tool is refused with a message back to the model;
 * - limits (rounds, token budget, error breaker, attempts) are stop conditions the agent passes in;
 * - `accept` validates the final answer (in JSON mode with the decision the shared parser read); what it rejects
 *   goes back to the model with the problems (correction). runDefinition passes the definition's answer schema,
 *   so what a valid answer is belongs to the agent, never to whoever runs it;
 * - a JSON decision whose action is in `waitOn` ends the turn `waiting` for a person (an answer or an approval);
 * - every round is a `step` span in the trace (thought, actions, observations), next to the gateway's llm spans
 *   and the registry's tool spans; events go to `onEvent` as they happen; `signal` cancels between and during
 *   model calls.
 */

export interface LoopTools {
  registry: ToolRegistry;
  /** The only tools that may run, whatever the model asks for. */
  allowed: readonly string[];
  /** Whether this round offers tools; once false the model has to answer. */
  offerWhen: (progress: Readonly<LoopProgress>) => boolean;
  /**
   * A tool call in a round that offered none: `finish` takes the answer as it is (the model was told to answer),
   * `refuse` sends a refusal back and counts a failed round.
   */
  whenWithheld: 'finish' | 'refuse';
  /** Where refusals say the tool is not allowed ("for this rule"); "here" by default. */
  scope?: string;
}

/** `truncated`: the answer was rejected because it was cut off (JSON that ends open), so the stop can say so. */
export type Acceptance<T> = AnswerCheck<T>;

/** The answer `accept` judges: the model's text and, in JSON decision mode, the decision it holds. */
export type LoopAnswer = AnswerText;

export interface Observations {
  /** A tool's result as the model reads it (a declared data block). */
  result(outcome: ToolCallResult): string;
  /** A failed or refused call, so the model can fix its arguments. */
  failure(call: ToolCallRequest, error: string): string;
}

export interface LoopConfig<T> {
  llm: LlmGateway;
  trace: TraceScope;
  /** The conversation so far, system prompt first; the loop works on a copy and returns it. */
  messages: ChatMessage[];
  tools?: LoopTools;
  /** JSON decisions instead of native function calling (the decision's tool calls run through `tools`). */
  decisions?: DecisionMode;
  model?: { name?: string; temperature?: number; maxTokens?: number; jsonMode?: boolean };
  stopWhen?: StopCondition[];
  /** Validate-and-correct: the value of an acceptable answer, or the problems to send back. */
  accept: (answer: LoopAnswer) => Acceptance<T>;
  /** The message that carries the problems of a rejected answer back to the model. */
  correction?: (problems: string[]) => ChatMessage;
  observations: Observations;
  onEvent?: AgentEventSink;
  /** Called after each round with the messages it added (tool calls, observations, corrections): a conversation log persists them as they happen. */
  onMessages?: (added: ChatMessage[]) => Promise<void>;
  signal?: AbortSignal;
  /** Names the step spans ("soft_rule", "agent"). */
  name?: string;
  /**
   * `attempt`: a failed model call (unreachable, timed out, refused) is one more failed attempt, counted by
   * `attemptLimit`, instead of ending the turn with the error. For upkeep jobs (hot-memory pruning) whose fallback
   * is a notice to an admin; a cancelled call still throws.
   */
  modelErrors?: 'throw' | 'attempt';
}

interface LoopRecord {
  messages: ChatMessage[];
  /** Every tool call the model asked for, refused and failed ones included, in order. */
  toolCalls: ToolCallResult[];
  progress: LoopProgress;
}

export type LoopOutcome<T> =
  | ({ kind: 'final'; value: T; content: string; response: ChatResponse; parsedAs?: ParsedAs } & LoopRecord)
  | ({ kind: 'waiting' } & Waiting & LoopRecord)
  | ({ kind: 'stopped'; reason: StopReason; lastContent: string; lastFailure: LastFailure | undefined } & LoopRecord);

/**
 * A JSON decision whose action is in `waitOn`: the turn ends until a person answers or approves. `messages` ends
 * with the model's decision, so a resumed run appends the person's reply and continues from there.
 */
export interface Waiting {
  awaiting: 'answer' | 'approval';
  action: string;
  /** The whole decision object the shared parser read (the question to ask, the action to approve). */
  decision: Record<string, unknown>;
  content: string;
}

/** Why the last unsuccessful round failed: a tool call's error, the problems of an unusable answer, or a failed model call. */
export type LastFailure = { kind: 'tool'; error: string } | { kind: 'answer'; problems: string[]; truncated?: boolean } | { kind: 'model'; error: string };

/** Round outcome: what one model call led to. The outer loop is a switch on it. */
type RoundResult<T> =
  | { next: 'tools'; failed: boolean; error?: string }
  | { next: 'correct'; problems: string[]; truncated?: boolean }
  | { next: 'model_failed'; error: string }
  | ({ next: 'wait' } & Waiting)
  | { next: 'final'; value: T; content: string; response: ChatResponse; parsedAs?: ParsedAs };

export async function runLoop<T>(config: LoopConfig<T>): Promise<LoopOutcome<T>> {
  const messages = [...config.messages];
  const toolCalls: ToolCallResult[] = [];
  const progress: LoopProgress = { rounds: 0, toolRounds: 0, failedToolRounds: 0, failedToolCallsInARow: 0, corrections: 0, truncatedAnswers: 0, failedModelCalls: 0, promptTokens: 0, completionTokens: 0 };
  const specs = config.tools ? config.tools.registry.specs(config.tools.allowed) : [];
  let lastContent = '';
  let lastFailure: LastFailure | undefined;

  for (;;) {
    throwIfCancelled(config.signal);
    const limit = config.stopWhen?.map((stop) => stop(progress)).find(Boolean);
    // Whichever limit fired, an answer cut off just before is what the caller can act on (a higher max tokens).
    const reason = limit && lastFailure?.kind === 'answer' && lastFailure.truncated ? 'truncated' : limit;
    if (reason) return { kind: 'stopped', reason, lastContent, lastFailure, messages, toolCalls, progress };

    const round = progress.rounds + 1;
    const before = messages.length;
    const offerTools = Boolean(config.tools) && config.tools!.offerWhen(progress);
    const result = await config.trace.span(
      'step',
      `${config.name ?? 'agent'}:round ${round}`,
      { round, offeredTools: offerTools ? config.tools!.allowed : [] },
      () => runRound(config, { messages, toolCalls, progress, round, offerTools, specs }),
      (r) => ({ output: describeRound(r, messages), status: r.next === 'final' || r.next === 'wait' || (r.next === 'tools' && !r.failed) ? 'success' : 'failed' }),
    );
    progress.rounds = round;
    if (config.onMessages && messages.length > before) await config.onMessages(messages.slice(before));
    switch (result.next) {
      case 'final':
        return { kind: 'final', value: result.value, content: result.content, response: result.response, ...(result.parsedAs ? { parsedAs: result.parsedAs } : {}), messages, toolCalls, progress };
      case 'wait':
        return { kind: 'waiting', awaiting: result.awaiting, action: result.action, decision: result.decision, content: result.content, messages, toolCalls, progress };
      case 'model_failed':
        progress.failedModelCalls++;
        lastFailure = { kind: 'model', error: result.error };
        break;
      case 'tools':
        if (result.failed) {
          progress.failedToolRounds++;
          lastFailure = { kind: 'tool', error: result.error ?? '' };
        } else progress.toolRounds++;
        break;
      case 'correct':
        progress.corrections++;
        if (result.truncated) progress.truncatedAnswers++;
        lastFailure = { kind: 'answer', problems: result.problems, ...(result.truncated ? { truncated: true } : {}) };
        break;
    }
    // This run's own text only: the history before it (a continued conversation) holds earlier turns' answers.
    lastContent = lastAssistantText(messages.slice(config.messages.length));
  }
}

interface RoundState extends LoopRecord {
  round: number;
  offerTools: boolean;
  specs: ToolSpec[];
}

async function runRound<T>(config: LoopConfig<T>, state: RoundState): Promise<RoundResult<T>> {
  const { messages, progress, round } = state;
  const onDelta = config.onEvent ? (delta: Parameters<NonNullable<Parameters<LlmGateway['chat']>[0]['onDelta']>>[0]) => {
    if (delta.type === 'text') config.onEvent!({ type: 'text_delta', round, text: delta.text });
  } : undefined;
  let response: ChatResponse;
  try {
    response = await config.llm.chat(
      {
        messages,
        tools: state.offerTools && !config.decisions && state.specs.length ? state.specs : undefined,
        model: config.model?.name,
        temperature: config.model?.temperature,
        maxTokens: config.model?.maxTokens,
        jsonMode: config.model?.jsonMode,
        signal: config.signal,
        onDelta,
      },
      config.trace,
    );
  } catch (error) {
    // An abort surfaces from the client as its own error; the caller asked to stop, so say that.
    throwIfCancelled(config.signal);
    if (config.modelErrors === 'attempt' && !(ClinAgentError.isInstance(error) && error.code === 'CANCELLED')) return { next: 'model_failed', error: errorMessage(error) };
    throw error;
  }
  progress.promptTokens += response.usage.promptTokens || countTokens(messages.map(messageText).join('\n'));
  progress.completionTokens += response.usage.completionTokens || countTokens(response.content);
  config.onEvent?.({ type: 'round_finished', round, promptTokens: response.usage.promptTokens, completionTokens: response.usage.completionTokens, toolCalls: config.decisions ? 0 : response.toolCalls.length, ...(response.finishReason === 'length' ? { truncated: true as const } : {}) });

  // Cut off by the token limit: the text (or a tool call's arguments) is a prefix of what the model meant, even
  // when it happens to parse. It is never taken as the answer nor run as a call; the model is asked again.
  if (response.finishReason === 'length') return correct(config, messages, response.content, [TRUNCATED_PROBLEM], true);

  // Native function calling.
  if (response.toolCalls.length && !config.decisions) {
    if (!state.offerTools && config.tools?.whenWithheld !== 'refuse') return accept(config, response);
    messages.push({
      role: 'assistant',
      content: response.content || null,
      tool_calls: response.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })),
    });
    let error: string | undefined;
    for (const call of response.toolCalls) {
      const outcome = await act(config, state, call, round);
      messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.success ? config.observations.result(outcome) : config.observations.failure(call, outcome.error) });
      if (!outcome.success) error ??= outcome.error;
    }
    return { next: 'tools', failed: error !== undefined, error };
  }

  // A JSON decision: a tool to use runs like a native call, its observation goes back as data.
  if (config.decisions) {
    const decision = readDecision(response.content, config.decisions);
    if (decision.kind === 'use_tool') {
      messages.push({ role: 'assistant', content: response.content });
      const call: ToolCallRequest = { id: `decision_${round}`, name: decision.tool, arguments: decision.arguments };
      const outcome = await act(config, state, call, round);
      messages.push({ role: 'user', content: outcome.success ? config.observations.result(outcome) : config.observations.failure(call, outcome.error) });
      return { next: 'tools', failed: !outcome.success, error: outcome.success ? undefined : outcome.error };
    }
    if (decision.kind === 'invalid') return correct(config, messages, response.content, decision.problems, decision.truncated);
    const awaiting = config.decisions.waitOn?.[decision.action];
    if (awaiting) {
      messages.push({ role: 'assistant', content: response.content });
      return { next: 'wait', awaiting, action: decision.action, decision: decision.data, content: response.content };
    }
    return accept(config, response, { action: decision.action, data: decision.data });
  }
  return accept(config, response);

  function accept(cfg: LoopConfig<T>, res: ChatResponse, decision?: LoopAnswer['decision']): RoundResult<T> {
    const verdict = cfg.accept(decision ? { content: res.content, decision } : { content: res.content });
    if (verdict.ok) return { next: 'final', value: verdict.value, content: res.content, response: res, ...(verdict.parsedAs ? { parsedAs: verdict.parsedAs } : {}) };
    return correct(cfg, messages, res.content, verdict.problems, verdict.truncated);
  }
}

const TRUNCATED_PROBLEM = '(root): the answer was cut off at the output token limit (finish_reason "length") before it was complete; answer again, shorter, so that the whole answer fits';

function correct<T>(config: LoopConfig<T>, messages: ChatMessage[], content: string, problems: string[], truncated = false): RoundResult<T> {
  // An answer from a model that ignored max_tokens is not sent back whole on every later round; an empty one (a
  // withheld tool call, nothing said) is not an assistant message at all, and a conversation log would refuse it.
  if (content.trim()) messages.push({ role: 'assistant', content: clipLongText(content) });
  if (config.correction) messages.push(config.correction(problems));
  return { next: 'correct', problems, ...(truncated ? { truncated } : {}) };
}

/** Runs one call through the registry, or refuses it without running when it is not allowed. */
async function act<T>(config: LoopConfig<T>, state: RoundState, call: ToolCallRequest, round: number): Promise<ToolCallResult> {
  config.onEvent?.({ type: 'tool_call_started', round, callId: call.id, name: call.name, arguments: call.arguments });
  const tools = config.tools;
  let outcome: ToolCallResult;
  const scope = tools?.scope ?? 'here';
  if (!tools || !tools.allowed.includes(call.name)) {
    outcome = refused(call, `Tool "${call.name}" is not allowed ${scope}. Allowed tools: ${tools?.allowed.join(', ') || '(none)'}.`);
  } else if (!state.offerTools) {
    outcome = refused(call, `No more tool calls are allowed ${scope} (${state.progress.toolRounds} rounds used). Answer with what you have.`);
  } else {
    outcome = await tools.registry.run(call.name, call.arguments, config.trace);
  }
  state.toolCalls.push(outcome);
  state.progress.failedToolCallsInARow = outcome.success ? 0 : state.progress.failedToolCallsInARow + 1;
  config.onEvent?.({ type: 'tool_call_finished', round, callId: call.id, name: call.name, success: outcome.success, ...(outcome.success ? {} : { error: outcome.error }) });
  return outcome;
}

function refused(call: ToolCallRequest, error: string): ToolCallResult {
  return { toolName: call.name, success: false, arguments: call.arguments, result: null, error };
}

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ClinAgentError('CANCELLED', 'The run was stopped before it finished; what it did so far is in its trace.');
}

/** What the step span records: the thought (the model's text), the actions it took and what it observed. */
function describeRound(result: RoundResult<unknown>, messages: ChatMessage[]): unknown {
  if (result.next === 'final') return { thought: clipLongText(result.content), reasoning: result.response.reasoning ? clipLongText(result.response.reasoning) : undefined, outcome: 'answer' };
  if (result.next === 'correct') return { outcome: result.truncated ? 'truncated' : 'correction', problems: result.problems };
  if (result.next === 'model_failed') return { outcome: 'model_failed', error: result.error };
  if (result.next === 'wait') return { thought: clipLongText(result.content), outcome: 'waiting', awaiting: result.awaiting, action: result.action };
  const start = messages.map((m) => m.role).lastIndexOf('assistant');
  const assistant = messages[start] as { content?: unknown; tool_calls?: Array<{ function: { name: string; arguments: string } }> };
  return {
    outcome: result.failed ? 'tool_failed' : 'tools',
    thought: typeof assistant?.content === 'string' ? clipLongText(assistant.content) : '',
    actions: assistant?.tool_calls?.map((c) => ({ tool: c.function.name, arguments: c.function.arguments })),
    observations: messages.slice(start + 1).map((m) => messageText(m)),
  };
}

function lastAssistantText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && typeof m.content === 'string') return m.content;
  }
  return '';
}

function messageText(message: ChatMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'object' && part && 'text' in part ? String((part as { text: unknown }).text) : '')).join('');
  return '';
}
