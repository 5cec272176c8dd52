import { ClinAgentError } from '../../../core/errors.js';
import type { SecretRegistry } from '../../../core/secrets.js';
import type { TraceRun } from '../../../core/trace/store.js';
import { emptyResult, recordFailure, type AgentResult } from '../../result.js';
import type { Scenario } from '../../scenarios/load.js';
import type { AgentEngine, EngineRunOptions } from '../engine.js';
import type { DifyAnswer } from './dify-answer.js';
import { createDifyClient, type DifyClient } from './dify-client.js';
import { createDifyFetch } from './dify-fetch.js';
import { difyError } from './dify-errors.js';
import { readDifyKey } from './dify-key.js';
import { streamDifyAnswer } from './stream-dify-answer.js';

export interface DifyEngineOptions {
  /** Where key variables are read; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The process's masking registry: a key read here is masked in every log line and trace from then on. */
  secrets?: Pick<SecretRegistry, 'add'>;
  /** Waits before each retry of Dify's `too_many_requests`; three tries in all by default. */
  retryDelaysMs?: readonly number[];
  /** Replaces the connect-time address check (createDifyFetch) with this fetch: tests only. */
  fetch?: typeof fetch;
  /** DIFY_ALLOWED_HOSTS: hosts whose non-public addresses the connection may reach; every other host must resolve to public ones. */
  allowedHosts?: ReadonlyArray<string>;
  /** Longest silence of a stream before it is given up; Dify pings every 10 s, so a minute means it is gone. */
  idleTimeoutMs?: number;
}

const DEFAULT_RETRY_DELAYS_MS = [1_000, 3_000];
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Dify's `user` when nobody signed in (the CLI): one name, so the app's logs still group these runs. */
const CLI_USER = 'clinagent-cli';

/**
 * A scenario whose `engine.type` is dify, run through the app's `POST /chat-messages` in streaming mode (the only
 * mode agent apps have). The run has our trace (one llm span for the Dify call), our events and our AgentResult;
 * Dify's conversation id is kept with our conversation so the next turn continues there.
 */
export function createDifyEngine(options: DifyEngineOptions = {}): AgentEngine {
  const env = options.env ?? process.env;
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const fetchFn = options.fetch ?? createDifyFetch(options.allowedHosts ?? []);

  function clientFor(scenario: Scenario): DifyClient {
    if (scenario.engine.type !== 'dify') throw new ClinAgentError('INTERNAL', `Scenario ${scenario.id} does not run on Dify.`);
    const apiKey = readDifyKey(scenario, env);
    options.secrets?.add(apiKey);
    return createDifyClient({ scenarioId: scenario.id, baseUrl: scenario.engine.baseUrl, apiKey, retryDelaysMs, fetch: fetchFn });
  }

  return {
    type: 'dify',
    assertReady(scenario) {
      readDifyKey(scenario, env);
    },
    async run(scenario, input, runOptions) {
      const started = performance.now();
      const result = emptyResult();
      result.modelName = `dify:${scenario.engine.type === 'dify' ? scenario.engine.appMode : 'chat'}`;
      const trace = await runOptions.context.trace.start({ kind: 'agent', name: scenario.id, input: { scenarioId: scenario.id, input, engine: 'dify' }, userId: runOptions.userId, projectId: runOptions.projectId });
      result.traceId = trace.traceId;
      let internalError: string | undefined;
      try {
        if (!input.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'The input is empty. Type a question or instruction for the agent.', { field: 'input' });
        const client = clientFor(scenario);
        const difyConversationId = await openConversation(scenario, input, runOptions, trace, result);
        runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId, ...(result.conversationId ? { conversationId: result.conversationId } : {}) });
        const answer = await callApp(client, scenario, input, difyConversationId, runOptions, trace, idleTimeoutMs);
        result.answer = answer.answer;
        result.rawOutput = answer.answer;
        result.references = answer.references;
        result.toolCalls = answer.toolCalls;
        await keepConversation(runOptions, result.conversationId, answer, trace.traceId, difyConversationId);
        if (answer.failure) throw answer.failure;
        if (answer.error) throw difyError(scenario.id, { ...answer.error, message: client.redact(answer.error.message) }, 'stream');
        if (!answer.ended) {
          throw new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${scenario.id} ended its stream without message_end, so the answer may be incomplete. Try again; if it repeats, check the app's logs in Dify.`, { difyCode: 'stream_incomplete' });
        }
        result.status = 'success';
      } catch (error) {
        if (!result.conversationId) runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId });
        ({ internalError } = recordFailure(result, error));
        runOptions.context.logger?.warn({ traceId: trace.traceId, scenarioId: scenario.id, err: error }, 'dify agent run failed');
      }
      result.latencyMs = Math.round(performance.now() - started);
      await trace.finish({
        status: result.status,
        output: { answer: result.answer, references: result.references.map((r) => r.chunkId), toolCalls: result.toolCalls.length, modelName: result.modelName, latencyMs: result.latencyMs },
        error: internalError ?? (result.error || undefined),
      });
      return result;
    },
  };
}

/** One llm span for the whole Dify call: the query and whether it continues a conversation, never a header. */
function callApp(client: DifyClient, scenario: Scenario, input: string, conversationId: string | undefined, options: EngineRunOptions, trace: TraceRun, idleTimeoutMs: number): Promise<DifyAnswer> {
  const body = { query: input, inputs: {}, user: options.userId ?? CLI_USER, ...(conversationId ? { conversation_id: conversationId } : {}) };
  return trace.span(
    'llm',
    'dify:chat-messages',
    { query: input, continuesConversation: Boolean(conversationId) },
    () => streamDifyAnswer(client, { scenarioId: scenario.id, body, traceId: trace.traceId, signal: options.signal, idleTimeoutMs, onEvent: options.onEvent, logger: options.context.logger }),
    (answer) => ({
      output: { answer: answer.answer, toolCalls: answer.toolCalls.length, references: answer.references.map((r) => r.chunkId), ended: answer.ended, difyError: answer.error?.code },
      usage: answer.usage,
      status: answer.error || answer.failure || !answer.ended ? 'failed' : 'success',
      ...(answer.error ? { error: `${answer.error.code}: ${answer.error.message}` } : answer.failure ? { error: answer.failure.message } : {}),
    }),
  );
}

/** Our conversation (started or continued, the input logged first) and Dify's id for it, when it has one. */
async function openConversation(scenario: Scenario, input: string, options: EngineRunOptions, trace: TraceRun, result: AgentResult): Promise<string | undefined> {
  const conversation = options.conversation;
  if (!conversation) return undefined;
  const { store, actor } = conversation;
  const id = conversation.id ?? (await store.start({ actor, scenarioId: scenario.id, projectId: options.projectId, title: input })).id;
  const ref = conversation.id ? await store.engineRef(id, actor) : null;
  await store.append(id, [{ role: 'user', content: input, traceId: trace.traceId }], actor);
  result.conversationId = id;
  return ref?.type === 'dify' ? ref.conversationId : undefined;
}

/**
 * Keeps the Dify conversation id the turn ran in (Dify has it even when the turn failed), and logs a complete
 * answer in our conversation; a partial one would read as a real answer in the history of the next turn.
 */
async function keepConversation(options: EngineRunOptions, conversationId: string | null, answer: DifyAnswer, traceId: string, previousDifyId: string | undefined): Promise<void> {
  const conversation = options.conversation;
  if (!conversation || !conversationId) return;
  if (answer.conversationId && answer.conversationId !== previousDifyId) await conversation.store.setEngineRef(conversationId, { type: 'dify', conversationId: answer.conversationId }, conversation.actor);
  const complete = answer.ended && !answer.error && !answer.failure;
  if (complete && answer.answer) await conversation.store.append(conversationId, [{ role: 'assistant', content: answer.answer, traceId }], conversation.actor);
}
