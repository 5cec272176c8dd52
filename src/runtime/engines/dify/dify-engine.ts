import { DifyVariableName } from '../../../contract/agent.js';
import { ClinAgentError } from '../../../core/errors.js';
import type { SecretRegistry } from '../../../core/secrets.js';
import type { TraceRun } from '../../../core/trace/store.js';
import { emptyResult, recordFailure, type AgentResult } from '../../result.js';
import type { Scenario } from '../../scenarios/load.js';
import type { AgentEngine, EngineRunOptions } from '../engine.js';
import type { DifyInputValue, DifyEngineSpec } from '../../definitions/agent-definition.js';
import type { DifyAnswer, DifyNode } from './dify-answer.js';
import { createDifyClient, type DifyApi, type DifyClient } from './dify-client.js';
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
 * A scenario whose `engine.type` is dify, run through the app's API in streaming mode (the only mode agent apps
 * have): chat, agent and chatflow apps on `POST /chat-messages`, completion apps on `POST /completion-messages`,
 * workflows on `POST /workflows/run`. The run has our trace (one llm span for the Dify call, a step span per
 * workflow node), our events and our AgentResult; Dify's conversation id is kept with our conversation so the
 * next turn of a chat app continues there.
 */
export function createDifyEngine(options: DifyEngineOptions = {}): AgentEngine {
  const env = options.env ?? process.env;
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const fetchFn = options.fetch ?? createDifyFetch(options.allowedHosts ?? []);

  function clientFor(scenario: Scenario, spec: DifyEngineSpec): DifyClient {
    const apiKey = readDifyKey(scenario, env);
    options.secrets?.add(apiKey);
    return createDifyClient({ scenarioId: scenario.id, baseUrl: spec.baseUrl, apiKey, retryDelaysMs, fetch: fetchFn });
  }

  return {
    type: 'dify',
    takesInputs: true,
    assertReady(scenario, request) {
      const spec = difySpec(scenario);
      const badNames = Object.keys(request?.inputs ?? {}).filter((name) => !DifyVariableName.safeParse(name).success);
      if (badNames.length) {
        const problems = badNames.map((name) => `inputs.${name.slice(0, 80)}: must be a Dify variable name: letters, digits and _, not starting with a digit, at most 64`);
        throw new ClinAgentError('VALIDATION_FAILED', `Invalid request:\n- ${problems.join('\n- ')}`, { field: 'inputs', problems });
      }
      readDifyKey(scenario, env);
      if (spec.inputVariable && request?.inputs && spec.inputVariable in request.inputs) {
        throw new ClinAgentError('VALIDATION_FAILED', `inputs.${spec.inputVariable}: is where scenario ${scenario.id} puts the run's text (its engine.input_variable); send that text as input, not in inputs.`, { field: `inputs.${spec.inputVariable}` });
      }
    },
    async run(scenario, input, runOptions) {
      const started = performance.now();
      const result = emptyResult();
      const spec = scenario.engine.type === 'dify' ? scenario.engine : undefined;
      result.modelName = `dify:${spec?.appMode ?? 'chat'}`;
      const inputs = { ...spec?.inputs, ...runOptions.inputs };
      const trace = await runOptions.context.trace.start({ kind: 'agent', name: scenario.id, input: { scenarioId: scenario.id, input, inputs, engine: 'dify' }, userId: runOptions.userId, projectId: runOptions.projectId });
      result.traceId = trace.traceId;
      let internalError: string | undefined;
      try {
        if (!spec) throw new ClinAgentError('INTERNAL', `Scenario ${scenario.id} does not run on Dify.`);
        if (!input.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'The input is empty. Type a question or instruction for the agent.', { field: 'input' });
        const client = clientFor(scenario, spec);
        const difyConversationId = await openConversation(scenario, input, runOptions, trace, result);
        runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId, ...(result.conversationId ? { conversationId: result.conversationId } : {}) });
        const call = { client, scenario, spec, input, inputs, conversationId: apiOf(spec) === 'chat-messages' ? difyConversationId : undefined, options: runOptions, trace, idleTimeoutMs };
        const answer = await callApp(call);
        const final = finalAnswer(scenario, spec, answer);
        if (final.answer !== answer.answer && answer.answer) runOptions.onEvent?.({ type: 'text_replaced', text: final.answer, reason: `the workflow's output ${spec.outputKey}` });
        result.answer = final.answer;
        result.rawOutput = final.answer;
        result.structuredOutput = final.structuredOutput;
        result.references = answer.references;
        result.toolCalls = answer.toolCalls;
        result.files = answer.files;
        const failure = runFailure(scenario, spec, answer, final.problem, client.redact);
        // Only chat apps continue a conversation in Dify; a completion or workflow turn stands alone there.
        const kept = apiOf(spec) === 'chat-messages' ? answer : { ...answer, conversationId: undefined };
        await keepConversation(runOptions, result.conversationId, { ...kept, answer: final.answer }, !failure, trace.traceId, difyConversationId);
        if (failure) throw failure;
        result.status = 'success';
      } catch (error) {
        if (!result.conversationId) runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId });
        ({ internalError } = recordFailure(result, error));
        // An unreachable or refusing Dify is the app's state, said in words in the result: no stack trace for it.
        const said = ClinAgentError.isInstance(error) ? { code: error.code, error: error.message } : { err: error };
        runOptions.context.logger?.warn({ traceId: trace.traceId, scenarioId: scenario.id, ...said }, 'dify agent run failed');
      }
      result.latencyMs = Math.round(performance.now() - started);
      await trace.finish({
        status: result.status,
        output: { answer: result.answer, references: result.references.map((r) => r.chunkId), toolCalls: result.toolCalls.length, files: result.files.length, modelName: result.modelName, latencyMs: result.latencyMs },
        error: internalError ?? (result.error || undefined),
      });
      return result;
    },
  };
}

function difySpec(scenario: Scenario): DifyEngineSpec {
  if (scenario.engine.type !== 'dify') throw new ClinAgentError('INTERNAL', `Scenario ${scenario.id} does not run on Dify.`);
  return scenario.engine;
}

/** The API an app mode answers on: chat, agent and chatflow apps share chat-messages. */
function apiOf(spec: DifyEngineSpec): DifyApi {
  if (spec.appMode === 'workflow') return 'workflows';
  if (spec.appMode === 'completion') return 'completion-messages';
  return 'chat-messages';
}

interface AppCall {
  client: DifyClient;
  scenario: Scenario;
  spec: DifyEngineSpec;
  input: string;
  /** The scenario's start-form values with the run's over them. */
  inputs: Record<string, DifyInputValue>;
  conversationId: string | undefined;
  options: EngineRunOptions;
  trace: TraceRun;
  idleTimeoutMs: number;
}

/**
 * One llm span for the whole Dify call (the query, the start-form values and whether it continues a conversation,
 * never a header), and one step span per workflow node inside it. Chat and agent apps take the text as `query`;
 * completion apps and workflows take it in the input variable the scenario names.
 */
async function callApp(call: AppCall): Promise<DifyAnswer> {
  const { spec, input, options, trace } = call;
  const api = apiOf(spec);
  const user = options.userId ?? CLI_USER;
  const body =
    api === 'chat-messages'
      ? { query: input, inputs: call.inputs, user, ...(call.conversationId ? { conversation_id: call.conversationId } : {}) }
      : { inputs: { ...call.inputs, [spec.inputVariable ?? 'query']: input }, user };
  const nodes = createNodeSpans(trace);
  const answer = await trace.span(
    'llm',
    `dify:${api}`,
    { query: input, inputs: call.inputs, continuesConversation: Boolean(call.conversationId) },
    async () => {
      try {
        return await streamDifyAnswer(call.client, {
          scenarioId: call.scenario.id, baseUrl: spec.baseUrl, endsWith: api === 'workflows' ? 'workflow_finished' : 'message_end', api, body,
          traceId: trace.traceId, signal: options.signal, idleTimeoutMs: call.idleTimeoutMs, onEvent: options.onEvent, onNode: nodes.onNode, logger: options.context.logger,
        });
      } finally {
        await nodes.settle();
      }
    },
    (answer) => {
      const failed = answer.error || answer.failure || !answer.ended || (answer.workflow && answer.workflow.status !== 'succeeded');
      return {
        output: { answer: answer.answer, toolCalls: answer.toolCalls.length, references: answer.references.map((r) => r.chunkId), files: answer.files.length, ended: answer.ended, difyError: answer.error?.code, ...(answer.workflow ? { workflow: answer.workflow } : {}) },
        usage: answer.usage,
        status: failed ? 'failed' : 'success',
        ...(answer.error ? { error: `${answer.error.code}: ${answer.error.message}` } : answer.failure ? { error: answer.failure.message } : answer.workflow?.error ? { error: answer.workflow.error } : {}),
      };
    },
  );
  return answer;
}

/**
 * Each workflow node as a step span from its `node_started` to its `node_finished`, so the trace shows where the
 * time went and which node failed. A node still open when the stream ends is closed as failed.
 */
function createNodeSpans(trace: TraceRun) {
  const open = new Map<string, (finished: DifyNode | undefined) => void>();
  const spans: Array<Promise<unknown>> = [];
  const span = (node: DifyNode, wait: Promise<DifyNode | undefined>) =>
    spans.push(
      trace.span('step', `dify:node ${node.title || node.nodeId}`, { nodeId: node.nodeId, nodeType: node.nodeType, title: node.title }, () => wait, (finished) => {
        if (!finished) return { status: 'failed', error: 'the stream ended before this node finished' };
        const ok = finished.status === 'succeeded';
        return { status: ok ? 'success' : 'failed', output: { status: finished.status, elapsedTime: finished.elapsedTime, totalTokens: finished.totalTokens }, ...(ok ? {} : { error: finished.error ?? `node ${finished.status}` }) };
      }),
    );
  return {
    onNode(phase: 'started' | 'finished', node: DifyNode): void {
      if (phase === 'started') {
        span(node, new Promise((resolve) => open.set(node.executionId, resolve)));
        return;
      }
      const close = open.get(node.executionId);
      open.delete(node.executionId);
      if (close) close(node);
      else span(node, Promise.resolve(node));
    },
    async settle(): Promise<void> {
      for (const close of open.values()) close(undefined);
      open.clear();
      await Promise.all(spans);
    },
  };
}

/**
 * The answer of the run: the app's text, or for a workflow the output its scenario names (all outputs are the
 * structured output). A workflow that succeeded without that output is a problem of the scenario, named with
 * the outputs it does have.
 */
function finalAnswer(scenario: Scenario, spec: DifyEngineSpec, answer: DifyAnswer): { answer: string; structuredOutput: Record<string, unknown>; problem?: ClinAgentError } {
  if (spec.appMode !== 'workflow' || !answer.workflow || answer.workflow.status !== 'succeeded') return { answer: answer.answer, structuredOutput: answer.workflow?.outputs ?? {} };
  const outputs = answer.workflow.outputs;
  const key = spec.outputKey ?? '';
  if (!(key in outputs)) {
    const have = Object.keys(outputs);
    return {
      answer: answer.answer,
      structuredOutput: outputs,
      problem: new ClinAgentError('UPSTREAM_FAILED', `The Dify workflow of scenario ${scenario.id} finished without the output "${key}" that engine.output_key names (its outputs: ${have.join(', ') || 'none'}). Set output_key to one of them, or add "${key}" to the workflow's End node.`, { difyCode: 'output_missing' }),
    };
  }
  const value = outputs[key];
  return { answer: typeof value === 'string' ? value : JSON.stringify(value ?? null), structuredOutput: outputs };
}

/**
 * Why a streamed run did not complete, in order: our end (stopped, gone silent), Dify's `error` event, a workflow
 * that failed or was stopped, a stream without its terminal event, a workflow without the named output.
 */
function runFailure(scenario: Scenario, spec: DifyEngineSpec, answer: DifyAnswer, outputProblem: ClinAgentError | undefined, redact: (text: string) => string): ClinAgentError | undefined {
  if (answer.failure) return answer.failure;
  if (answer.error) return difyError(scenario.id, { ...answer.error, message: redact(answer.error.message) }, 'stream');
  if (answer.workflow && answer.workflow.status !== 'succeeded') return workflowError(scenario, answer, redact);
  if (!answer.ended) {
    const expected = spec.appMode === 'workflow' ? 'workflow_finished' : 'message_end';
    return new ClinAgentError('UPSTREAM_FAILED', `The Dify app of scenario ${scenario.id} ended its stream without ${expected}, so the answer may be incomplete. Try again; if it repeats, check the app's logs in Dify.`, { difyCode: 'stream_incomplete' });
  }
  return outputProblem;
}

/** A workflow (or chatflow) that ended `failed` or `stopped`: its own error, naming the node that failed when one did. */
function workflowError(scenario: Scenario, answer: DifyAnswer, redact: (text: string) => string): ClinAgentError {
  const workflow = answer.workflow!;
  const node = answer.failedNode;
  const where = node ? ` in node "${node.title || node.nodeId}"${node.nodeType ? ` (${node.nodeType})` : ''}` : '';
  const why = redact(workflow.error || node?.error || 'Dify gave no reason');
  const run = answer.workflowRunId ? ` (workflow run ${answer.workflowRunId})` : '';
  if (workflow.status === 'stopped') {
    return new ClinAgentError('UPSTREAM_FAILED', `The Dify workflow of scenario ${scenario.id} was stopped${where} before it finished: ${why}. Check its run logs in Dify${run}.`, { difyCode: 'workflow_stopped' });
  }
  return new ClinAgentError('UPSTREAM_FAILED', `The Dify workflow of scenario ${scenario.id} failed${where}: ${why}. Check the node's settings and its run logs in Dify${run}.`, {
    difyCode: 'workflow_failed',
    ...(node ? { difyNode: node.nodeId } : {}),
  });
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
async function keepConversation(options: EngineRunOptions, conversationId: string | null, answer: DifyAnswer, complete: boolean, traceId: string, previousDifyId: string | undefined): Promise<void> {
  const conversation = options.conversation;
  if (!conversation || !conversationId) return;
  if (answer.conversationId && answer.conversationId !== previousDifyId) await conversation.store.setEngineRef(conversationId, { type: 'dify', conversationId: answer.conversationId }, conversation.actor);
  if (complete && answer.answer) await conversation.store.append(conversationId, [{ role: 'assistant', content: answer.answer, traceId }], conversation.actor);
}
