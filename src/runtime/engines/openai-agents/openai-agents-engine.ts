import { Agent, Runner, type AgentInputItem, type RunResult } from '@openai/agents';
import type { LlmConfig } from '../../../core/config.js';
import { ClinAgentError } from '../../../core/errors.js';
import { parseStructuredOutput } from '../../../core/structured/parse.js';
import type { ToolCallResult } from '../../../core/tools/registry.js';
import type { TraceRun } from '../../../core/trace/store.js';
import { answerOf } from '../../definitions/answer-of.js';
import { correctionMessage, textCorrectionMessage } from '../../loop/correction.js';
import { buildMessages } from '../../messages.js';
import { truncatedAnswerError } from '../../run-agent.js';
import { emptyResult, recordFailure, type AgentResult } from '../../result.js';
import type { Scenario } from '../../scenarios/load.js';
import type { AgentEngine, EngineRunOptions } from '../engine.js';
import { historyItems } from './history-items.js';
import { registryTools } from './registry-tools.js';
import { maxTurnsOf, sdkRunError } from './sdk-errors.js';
import { sdkModelProvider } from './sdk-provider.js';

export interface OpenAiAgentsEngineOptions {
  /** The gateway's endpoint settings (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY, timeout, retries): the SDK calls the same model. */
  llm?: LlmConfig;
}

/**
 * A scenario whose `engine.type` is openai-agents, run by the OpenAI Agents SDK's Agent and run loop against the
 * gateway's OpenAI-compatible endpoint. What stays ours: the prompt (the scenario's instructions with its output
 * format, messages.ts), the tools (our registry checks, runs and traces every call), the answer check (the scenario's
 * answer schema), the trace, the events, the conversation log and the AgentResult. A run never throws for a
 * run-level problem: the limit of model calls, a misbehaving model or an unreachable endpoint is a failed result.
 */
export function createOpenAiAgentsEngine(options: OpenAiAgentsEngineOptions = {}): AgentEngine {
  return {
    type: 'openai-agents',
    async run(scenario, input, runOptions) {
      const started = performance.now();
      const result = emptyResult();
      const llm = options.llm;
      result.modelName = scenario.model.name ?? runOptions.context.llm.modelName;
      const trace = await runOptions.context.trace.start({ kind: 'agent', name: scenario.id, input: { scenarioId: scenario.id, input, engine: 'openai-agents' }, userId: runOptions.userId, projectId: runOptions.projectId });
      result.traceId = trace.traceId;
      let internalError: string | undefined;
      try {
        if (!input.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'The input is empty. Type a question or instruction for the agent.', { field: 'input' });
        runOptions.context.llm.assertConfigured();
        if (!llm) throw new ClinAgentError('LLM_NOT_CONFIGURED', 'The openai-agents engine was created without the LLM settings; pass the config\'s llm block to createEngines({ openaiAgents: { llm } }).');
        const history = await openConversation(scenario, input, runOptions, trace, result);
        runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId, ...(result.conversationId ? { conversationId: result.conversationId } : {}) });
        const { answer, value } = await checkedAnswer({ scenario, input, history, llm, options: runOptions, trace, calls: result.toolCalls }, result);
        const parsed = parseStructuredOutput(answer, scenario.output);
        result.structuredOutput = parsed.success ? parsed.data : {};
        const answerField = scenario.output.answerField;
        const fieldAnswer = answerField ? result.structuredOutput[answerField] : undefined;
        result.answer = typeof fieldAnswer === 'string' && fieldAnswer.trim() ? fieldAnswer : value;
        if (result.conversationId && runOptions.conversation) await runOptions.conversation.store.append(result.conversationId, [{ role: 'assistant', content: answer, traceId: trace.traceId }], runOptions.conversation.actor);
        result.status = 'success';
      } catch (error) {
        if (!result.conversationId) runOptions.onEvent?.({ type: 'run_started', traceId: trace.traceId });
        const failure = sdkRunError(error, scenario, llm, runOptions.signal);
        ({ internalError } = recordFailure(result, failure));
        // An unreachable endpoint or a looping model is said in words in the result: no stack trace for it.
        runOptions.context.logger?.warn({ traceId: trace.traceId, scenarioId: scenario.id, ...(ClinAgentError.isInstance(failure) ? { code: failure.code, error: failure.message } : { err: failure }) }, 'openai-agents run failed');
      }
      result.latencyMs = Math.round(performance.now() - started);
      await trace.finish({
        status: result.status,
        output: { answer: result.answer, structuredOutput: result.structuredOutput, toolCalls: result.toolCalls.length, modelName: result.modelName, latencyMs: result.latencyMs },
        error: internalError ?? (result.error || undefined),
      });
      return result;
    },
  };
}

interface SdkRun {
  scenario: Scenario;
  input: string;
  history: AgentInputItem[];
  llm: LlmConfig;
  options: EngineRunOptions;
  trace: TraceRun;
  calls: ToolCallResult[];
}

/** Answers tried before the run gives up, as on the built-in loop (run-definition.ts DEFAULT_CORRECTIONS). */
const ANSWER_TRIES = 3;

/**
 * The first answer that passes the scenario's answer check (its output type and JSON Schema, answer-of.ts), as on
 * the built-in loop: an answer that does not is sent back with its problems, in the loop's own correction message,
 * and the model asked again in the same run history, up to three answers in all. Each try is one SDK run with the
 * scenario's limit of model calls.
 */
async function checkedAnswer(run: SdkRun, result: AgentResult): Promise<{ answer: string; value: string }> {
  const check = answerOf(run.scenario);
  let items: AgentInputItem[] = [...run.history, { role: 'user', content: run.input }];
  let problems: string[] = [];
  for (let tries = 1; tries <= ANSWER_TRIES; tries++) {
    const done = await runSdk(run, items, tries);
    result.rawOutput = done.answer;
    // As on the built-in loop: an answer cut off at the token limit is not asked again, and never shown.
    if (done.truncated) throw truncatedAnswerError(run.scenario);
    const checked = check.read({ content: done.answer }, run.input);
    if (checked.ok) {
      // Only the answer that passed is shown: a refused one (malformed, or longer than a person can read) never streams.
      run.options.onEvent?.({ type: 'text_delta', round: done.rounds, text: done.answer });
      return { answer: done.answer, value: checked.value };
    }
    problems = checked.problems;
    await run.trace.span('step', 'openai-agents:answer refused', { try: tries, problems }, async () => undefined, () => ({ status: 'failed', error: problems.join('\n') }));
    const correction = check.format === 'text' ? textCorrectionMessage(problems) : correctionMessage(problems);
    items = [...done.history, { role: 'user', content: typeof correction.content === 'string' ? correction.content : '' }];
  }
  // What was wrong is in the trace (a step per refused answer); the person gets what to do, as from the built-in loop.
  throw new ClinAgentError('LLM_BAD_RESPONSE', `The model gave no usable answer after ${ANSWER_TRIES} tries, so none is shown. Try again, or ask in other words.`, { scenarioId: run.scenario.id, problems });
}

/**
 * One SDK run as one llm span (its model calls and tokens; the tool spans are the registry's own). Tool calls are
 * reported as they happen, each model call's tokens once the run has ended (the SDK runs without streaming here);
 * the answer's text once it has passed the check (checkedAnswer).
 */
async function runSdk(run: SdkRun, items: AgentInputItem[], tries: number): Promise<{ answer: string; history: AgentInputItem[]; rounds: number; truncated: boolean }> {
  const { scenario, input, options, trace } = run;
  const [system] = buildMessages(scenario, input, []);
  const agent = new Agent({
    name: scenario.id,
    instructions: typeof system?.content === 'string' ? system.content : '',
    tools: registryTools(scenario.tools, { registry: options.context.tools, trace, onEvent: options.onEvent, calls: run.calls }),
    modelSettings: { temperature: scenario.model.temperature, maxTokens: scenario.model.maxTokens },
  });
  const finishReasons: string[] = [];
  const runner = new Runner({ modelProvider: sdkModelProvider(run.llm, finishReasons), model: scenario.model.name ?? run.llm.model, tracingDisabled: true, workflowName: scenario.id });
  const maxTurns = maxTurnsOf(scenario);
  const sdkResult = await trace.span(
    'llm',
    'openai-agents:run',
    { input, try: tries, history: run.history.length, tools: scenario.tools, maxTurns },
    () => runner.run(agent, items, { maxTurns, signal: options.signal }),
    (done: RunResult<any, any>) => ({
      output: { answer: typeof done.finalOutput === 'string' ? done.finalOutput : '', modelCalls: done.rawResponses.length, toolCalls: run.calls.length },
      usage: { promptTokens: done.state.usage.inputTokens, completionTokens: done.state.usage.outputTokens },
    }),
  );
  sdkResult.rawResponses.forEach((response, i) => {
    const toolCalls = response.output.filter((item) => item.type === 'function_call').length;
    options.onEvent?.({ type: 'round_finished', round: i + 1, promptTokens: response.usage.inputTokens, completionTokens: response.usage.outputTokens, toolCalls });
  });
  if (sdkResult.interruptions?.length) {
    throw new ClinAgentError('INTERNAL', `The run of scenario ${scenario.id} stopped for a tool approval, which the openai-agents engine does not offer.`);
  }
  const answer = typeof sdkResult.finalOutput === 'string' ? sdkResult.finalOutput : '';
  return { answer, history: sdkResult.history, rounds: sdkResult.rawResponses.length, truncated: finishReasons.at(-1) === 'length' };
}

/** Our conversation (started or continued, the input logged first) and its history as SDK input items. */
async function openConversation(scenario: Scenario, input: string, options: EngineRunOptions, trace: TraceRun, result: AgentResult): Promise<AgentInputItem[]> {
  const conversation = options.conversation;
  if (!conversation) return [];
  const { store, actor } = conversation;
  const id = conversation.id ?? (await store.start({ actor, scenarioId: scenario.id, projectId: options.projectId, title: input })).id;
  const history = conversation.id ? await store.history(id, scenario.history, { actor, trace, model: scenario.model.name, scenarioId: scenario.id, signal: options.signal }) : [];
  await store.append(id, [{ role: 'user', content: input, traceId: trace.traceId }], actor);
  result.conversationId = id;
  return historyItems(history);
}
