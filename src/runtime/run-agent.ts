import { randomUUID } from 'node:crypto';
import type { LlmGateway } from '../core/llm/gateway.js';
import type { Logger } from '../core/logger.js';
import { parseStructuredOutput } from '../core/structured/parse.js';
import type { ToolRegistry } from '../core/tools/registry.js';
import type { TraceScope, TraceStore } from '../core/trace/store.js';
import type { ChatMessage } from '../core/llm/types.js';
import type { User } from '../core/auth/users.js';
import type { ConversationStore, TurnInput } from './conversations/index.js';
import { ClinAgentError } from '../core/errors.js';
import type { RagStore } from '../rag/index.js';
import { buildMessages, fitReferences, toolResultContent } from './messages.js';
import { waitingPrompt } from './loop/decision-text.js';
import { MAX_ANSWER_CHARS, runDefinition, type AgentEventSink, type LoopOutcome } from './loop/index.js';
import { emptyResult, recordFailure, type AgentResult } from './result.js';
import type { Scenario } from './scenarios/load.js';

/** What a run needs; passed explicitly so a test or another process can build it from any context. */
export interface AgentDeps {
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  rag?: Pick<RagStore, 'retrieve'>;
  logger?: Logger;
}

export interface RunAgentOptions {
  context: AgentDeps;
  /** Limit retrieval to these documents of the scenario for this run. */
  documentIds?: string[];
  /** Who asked, recorded on the trace: they (and admins) may read it back. */
  userId?: string;
  /** The project whose data the run reads, when there is one: its members may read the trace too. */
  projectId?: string;
  /** Stops the run: between rounds, and during a streamed model call. The trace is marked cancelled. */
  signal?: AbortSignal;
  /** Text deltas and tool calls as they happen (the streaming route turns them into server-sent events). */
  onEvent?: AgentEventSink;
  /**
   * Log the turn in a conversation and continue it: `id` absent starts a new one. The history the scenario's
   * strategy builds from the log goes before the input; every turn (the input, tool calls and results, the
   * answer) is appended as it happens. The store checks that the actor owns the conversation.
   */
  conversation?: { store: Pick<ConversationStore, 'start' | 'append' | 'history'>; actor: User; id?: string };
}

/**
 * runAgent(scenario, input, options) -> AgentResult: seed 004 section 4, plus a bounded function-calling
 * loop. It never throws for a run-level problem: configuration gaps, retrieval and LLM failures come back
 * as a failed result with an error that says what to do, and the trace records the run either way.
 */
export async function runAgent(scenario: Scenario, input: string, options: RunAgentOptions): Promise<AgentResult> {
  const { llm, tools, trace: traceStore, rag } = options.context;
  const started = performance.now(); // step 1
  const result = emptyResult();
  result.modelName = scenario.model.name ?? llm.modelName;
  const trace = await traceStore.start({ kind: 'agent', name: scenario.id, input: { scenarioId: scenario.id, input, documentIds: options.documentIds }, userId: options.userId, projectId: options.projectId });
  result.traceId = trace.traceId;
  let internalError: string | undefined;
  /** The new conversation's first write, running beside the first model call; settled before the run returns. */
  let firstWrite: () => Promise<void> = () => Promise.resolve();

  try {
    if (!input.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'The input is empty. Type a question or instruction for the agent.', { field: 'input' });
    // Checked before retrieval so an unconfigured install answers at once with what to set.
    llm.assertConfigured();
    // step 2: references from this scenario's documents only
    if (scenario.rag.enabled) {
      if (!rag) throw new ClinAgentError('VECTOR_STORE_UNAVAILABLE', 'This scenario uses RAG but no document store is available in this process.');
      const found = await trace.span(
        'retrieval',
        scenario.rag.collection,
        { query: input, topK: scenario.rag.topK, documentIds: options.documentIds },
        () => rag.retrieve({ scenarioId: scenario.id, query: input, collection: scenario.rag.collection, topK: scenario.rag.topK, documentIds: options.documentIds }),
        (refs) => ({ output: refs.map((r) => ({ chunkId: r.chunkId, score: r.score })) }),
      );
      result.references = fitReferences(found, scenario.rag.maxContextTokens);
    }
    // steps 3-5: tools offered to the model, messages, model call with a bounded tool loop
    const [system, ...rest] = buildMessages(scenario, input, result.references);
    const opened = await openConversation(scenario, input, options, trace, result);
    const history = opened.history;
    firstWrite = opened.logged;
    options.onEvent?.({ type: 'run_started', traceId: trace.traceId, ...(result.conversationId ? { conversationId: result.conversationId } : {}) });
    const log = options.conversation && result.conversationId ? conversationLog(options.conversation, result.conversationId, trace.traceId, () => firstWrite()) : undefined;
    // The scenario's definition decides the rest: only its own tools run (withheld after max_tool_rounds, so a
    // looping model has to answer), its decision mode, its stop limits and model settings.
    const outcome = await runDefinition(scenario, {
      name: 'agent',
      llm,
      trace,
      registry: tools,
      messages: [system!, ...history, ...rest],
      onMessages: log,
      // What a valid answer is, and the correction after one that is not, are the scenario's own (its output type,
      // answer-schema.ts outputAnswer): a durable run of the same scenario holds its answers to the same schema.
      observations: { result: toolResultContent, failure: (_call, error) => toolResultContent({ success: false, result: null, error }) },
      onEvent: boundedText(opened.startsWith ? (event) => { options.onEvent?.(event); opened.startsWith!(event); } : options.onEvent),
      signal: options.signal,
    });
    result.toolCalls = outcome.toolCalls;
    if (outcome.kind === 'stopped') {
      result.rawOutput = outcome.lastContent;
      throw stoppedError(scenario, outcome);
    }
    // A turn that waits for a person (decision.wait_on) asks them in its answer; their reply is the next turn.
    if (outcome.kind === 'waiting') options.onEvent?.({ type: 'waiting', awaiting: outcome.awaiting, prompt: waitingPrompt(outcome.content, outcome.decision) });
    const final = { content: outcome.content, modelName: outcome.kind === 'final' ? outcome.response.modelName : '' };
    await firstWrite();
    await log?.([{ role: 'assistant', content: final.content }]);
    result.rawOutput = final.content;
    result.modelName = final.modelName || result.modelName;
    // step 6: structured output; a final answer was accepted only once it parsed, a question to the person is kept as asked
    const parsed = parseStructuredOutput(final.content, scenario.output);
    result.structuredOutput = parsed.success ? parsed.data : {};
    const answerField = scenario.output.answerField;
    const fieldAnswer = answerField ? result.structuredOutput[answerField] : undefined;
    result.answer = typeof fieldAnswer === 'string' && fieldAnswer.trim() ? fieldAnswer : (outcome.kind === 'waiting' ? waitingPrompt(outcome.content, outcome.decision) : outcome.value);
    result.error = '';
    result.status = 'success'; // step 8
  } catch (error) {
    // step 9
    if (!result.conversationId) options.onEvent?.({ type: 'run_started', traceId: trace.traceId });
    // A conversation whose first write failed does not exist: the result must not point at it.
    if (!(await firstWrite().then(() => true, () => false))) result.conversationId = null;
    ({ internalError } = recordFailure(result, error));
    options.context.logger?.warn({ traceId: trace.traceId, scenarioId: scenario.id, err: error }, 'agent run failed');
  }
  result.latencyMs = Math.round(performance.now() - started); // step 7
  await trace.finish({
    status: result.status,
    output: { answer: result.answer, structuredOutput: result.structuredOutput, references: result.references.map((r) => r.chunkId), toolCalls: result.toolCalls.length, modelName: result.modelName, latencyMs: result.latencyMs },
    error: internalError ?? (result.error || undefined),
  });
  return result;
}

/**
 * Streamed text of one round stops at MAX_ANSWER_CHARS: an answer longer than that is refused anyway (asked again),
 * and a model that ignores max_tokens must not stream 200 kB to the client meanwhile.
 */
function boundedText(sink: AgentEventSink | undefined): AgentEventSink | undefined {
  if (!sink) return undefined;
  const sent = new Map<number, number>();
  return (event) => {
    if (event.type === 'text_delta') {
      const before = sent.get(event.round) ?? 0;
      const room = MAX_ANSWER_CHARS - before;
      if (room <= 0) return;
      sent.set(event.round, before + event.text.length);
      sink(event.text.length > room ? { ...event, text: event.text.slice(0, room) } : event);
      return;
    }
    sink(event);
  };
}

/** An answer cut off by the model's output token limit: never passed off as the result, on any engine. */
export function truncatedAnswerError(scenario: Scenario, details: Record<string, unknown> = { reason: 'truncated', scenarioId: scenario.id }): ClinAgentError {
  return new ClinAgentError('LLM_BAD_RESPONSE', `The model's answer was cut off by its output token limit before it was complete, so it was not used. Ask a narrower question, or raise model.max_tokens of scenario ${scenario.id} (${scenario.sourceFile}).`, details);
}

/**
 * The turn ended without a usable answer: say why in words the asker can act on, and where the limit is set. An
 * answer cut off by the token limit or not valid for the output type is never passed off as the result.
 */
function stoppedError(scenario: Scenario, outcome: Extract<LoopOutcome<string>, { kind: 'stopped' }>): ClinAgentError {
  const { reason, lastFailure } = outcome;
  const details = { reason, scenarioId: scenario.id };
  if (reason === 'truncated') return truncatedAnswerError(scenario, details);
  if (lastFailure?.kind === 'answer') {
    // What was wrong (parse errors, field paths) is for the trace, where each round's step has it; the person gets what to do.
    return new ClinAgentError('LLM_BAD_RESPONSE', `The model gave no usable answer after ${outcome.progress.corrections} tries, so none is shown. Try again, or ask in other words.`, { ...details, problems: lastFailure.problems });
  }
  return new ClinAgentError('LLM_BAD_RESPONSE', `The run stopped without an answer: the limit "${reason}" of scenario ${scenario.id} was reached (stop: in ${scenario.sourceFile}). Ask a narrower question, or raise the limit.`, details);
}

/**
 * Starts or continues the run's conversation: the history to put before the input (built from the log by the
 * scenario's strategy), and `logged`, the write of the input. A continued conversation logs the input before the
 * model sees it. A new one has no history to read, so its id is chosen here and the conversation is written with
 * its first question in one transaction once the first model call has answered (`startsWith`): the streamed text
 * of that call never waits on the database (issue 22). Every later turn is appended after that write, and the run
 * does not return before it, so a run that answers has its whole exchange logged (its trace has the input anyway).
 */
async function openConversation(scenario: Scenario, input: string, options: RunAgentOptions, trace: TraceScope, result: AgentResult): Promise<{ history: ChatMessage[]; logged: () => Promise<void>; startsWith?: AgentEventSink }> {
  const conversation = options.conversation;
  if (!conversation) return { history: [], logged: () => Promise.resolve() };
  const { store, actor } = conversation;
  const turn = { role: 'user' as const, content: input, traceId: trace.traceId };
  if (!conversation.id) {
    const id = randomUUID();
    result.conversationId = id;
    // On the embedded database a write is CPU work on this thread, which would hold the streamed text back; it
    // starts when the first model call has answered (its round finished) and is awaited before any later turn.
    let write: Promise<void> | undefined;
    const logged = () => {
      write ??= store.start({ id, actor, scenarioId: scenario.id, projectId: options.projectId, title: input, firstTurns: [turn] }).then(() => undefined);
      return write;
    };
    return { history: [], logged, startsWith: (event) => { if (event.type === 'round_finished') void logged().catch(() => undefined); } };
  }
  const history = await store.history(conversation.id, scenario.history, { actor, trace, model: scenario.model.name, scenarioId: scenario.id, signal: options.signal });
  await store.append(conversation.id, [turn], actor);
  result.conversationId = conversation.id;
  return { history, logged: () => Promise.resolve() };
}

/** Appends what a round added to the conversation log, as turns. */
function conversationLog(conversation: NonNullable<RunAgentOptions['conversation']>, conversationId: string, traceId: string, started: () => Promise<void>) {
  return async (added: ChatMessage[]): Promise<void> => {
    await started();
    const turns: TurnInput[] = [];
    for (const message of added) {
      const content = typeof message.content === 'string' ? message.content : '';
      if (message.role === 'assistant') {
        const toolCalls = message.tool_calls?.flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
        turns.push({ role: 'assistant', content, ...(toolCalls?.length ? { toolCalls } : {}), traceId });
      } else if (message.role === 'tool') {
        turns.push({ role: 'tool', content, toolCallId: message.tool_call_id, traceId });
      } else if (message.role === 'user') {
        turns.push({ role: 'user', content, traceId });
      }
    }
    if (turns.length) await conversation.store.append(conversationId, turns, conversation.actor);
  };
}
