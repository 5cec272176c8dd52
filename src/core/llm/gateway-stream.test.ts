import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel, type ScriptedStep, type StreamOptions } from '../../testing/scripted-model.js';
import { openTestDatabase } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import type { LlmConfig } from '../config.js';
import type { Database } from '../db/connect.js';
import { ClinAgentError } from '../errors.js';
import { countTokens } from '../tokenizer.js';
import { ALL_TRACES, createTraceStore } from '../trace/store.js';
import { operatorDetailOf } from './errors.js';
import { createLlmGateway } from './gateway.js';
import type { ChatDelta, ChatRequest } from './types.js';

const apiKey = 'sk-test-secret-key-0123456789abcdef';
const question: ChatRequest = { messages: [{ role: 'system', content: 'You check trial data.' }, { role: 'user', content: 'Is SBP 300 mmHg plausible?' }] };

let database: Database;
let model: ScriptedModel | undefined;

beforeAll(async () => {
  database = await openTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function gatewayFor(steps: ScriptedStep[], overrides: Partial<LlmConfig> = {}, stream?: StreamOptions) {
  model = await startScriptedModel(steps, { stream });
  const config: LlmConfig = { baseUrl: model.baseURL, model: 'qwen-test', apiKey, timeoutMs: 2000, maxRetries: 2, ...overrides };
  return { gateway: createLlmGateway(config), server: model };
}

/** Streams `request` and returns the response with every delta the gateway passed on. */
async function streamed(gateway: ReturnType<typeof createLlmGateway>, request: ChatRequest = question) {
  const deltas: ChatDelta[] = [];
  const response = await gateway.chat({ ...request, onDelta: (delta) => deltas.push(delta) });
  const text = deltas.flatMap((d) => (d.type === 'text' ? [d.text] : [])).join('');
  return { response, deltas, text };
}

async function failure(promise: Promise<unknown>): Promise<ClinAgentError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  if (!ClinAgentError.isInstance(error)) throw error;
  return error;
}

describe('createLlmGateway, streaming', () => {
  it('passes the text on in pieces and resolves to the same response as a plain call, usage from the last chunk', async () => {
    const reply = 'No: 300 mmHg is implausible for a seated adult.';
    const step: ScriptedStep = { reply, model: 'qwen-test-2025-06', usage: { prompt_tokens: 21, completion_tokens: 9 } };
    const { gateway, server } = await gatewayFor([step, step]);

    const { response, deltas, text } = await streamed(gateway);
    const plain = await gateway.chat(question);

    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.every((d) => d.type === 'text')).toBe(true);
    expect(text).toBe(reply);
    const { latencyMs: _a, ...streamedResponse } = response;
    const { latencyMs: _b, ...plainResponse } = plain;
    expect(streamedResponse).toEqual(plainResponse);
    expect(response).toMatchObject({ content: reply, modelName: 'qwen-test-2025-06', finishReason: 'stop', usage: { promptTokens: 21, completionTokens: 9 } });
    expect(server.requests[0]?.body).toMatchObject({ model: 'qwen-test', messages: question.messages, stream: true, stream_options: { include_usage: true } });
    expect(server.requests[0]?.stream).toMatchObject({ isComplete: true, isClientGone: false });
    expect(server.requests[1]?.body).not.toHaveProperty('stream');
  });

  it('passes tool-call argument pieces on and assembles the calls', async () => {
    const { gateway } = await gatewayFor([
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 24, denominator: 30 }, id: 'call_rate_1' }, { name: 'query_demo_records', arguments: { field: 'sbp' } }] },
    ]);

    const { response, deltas } = await streamed(gateway, { ...question, tools: [{ name: 'calculate_rate', description: 'Rate.', parameters: { type: 'object' } }, { name: 'query_demo_records', description: 'Query.', parameters: { type: 'object' } }] });

    const calls = deltas.filter((d): d is Extract<ChatDelta, { type: 'tool_call' }> => d.type === 'tool_call');
    expect(calls.length).toBeGreaterThan(4);
    expect(calls[0]).toEqual({ type: 'tool_call', index: 0, id: 'call_rate_1', name: 'calculate_rate', argumentsDelta: '' });
    expect(calls.filter((d) => d.index === 0).map((d) => d.argumentsDelta).join('')).toBe('{"numerator":24,"denominator":30}');
    expect(calls.filter((d) => d.index === 1 && d.name).map((d) => d.name)).toEqual(['query_demo_records']);
    expect(response.toolCalls).toEqual([
      { id: 'call_rate_1', name: 'calculate_rate', arguments: '{"numerator":24,"denominator":30}' },
      { id: expect.stringMatching(/^call_/), name: 'query_demo_records', arguments: '{"field":"sbp"}' },
    ]);
    expect(response.finishReason).toBe('tool_calls');
    expect(response.content).toBe('');
  });

  it('never passes thinking on as text: a <think> block cut across chunks, or reasoning_content', async () => {
    const answer = '{"passed": true}';
    const pieces = ['<th', 'ink>let me check... {"pass', 'ed": false}</th', 'ink>\n\n', answer.slice(0, 5), answer.slice(5)];
    const { gateway } = await gatewayFor([
      { reply: pieces.join(''), stream: { pieces } },
      { reply: answer, reasoningContent: 'SBP 300 is far above any plausible value.' },
      { reply: `Before <THINKING>hidden</THINKING> after <think>cut off by max_tokens`, stream: { pieceChars: 1 } },
    ]);

    const inline = await streamed(gateway);
    expect(inline.text).toBe(answer);
    expect(inline.response).toMatchObject({ content: answer, reasoning: 'let me check... {"passed": false}' });

    const separate = await streamed(gateway);
    expect(separate.text).toBe(answer);
    expect(separate.response).toMatchObject({ content: answer, reasoning: 'SBP 300 is far above any plausible value.' });

    // Cut one character at a time: no piece of a tag, of a block or of an unclosed block shows.
    const unclosed = await streamed(gateway);
    expect(unclosed.text).toBe('Before  after ');
    expect(unclosed.response.content).toBe('Before  after');
    expect(unclosed.response.reasoning).toBe('hidden\n\ncut off by max_tokens');
  });

  it('counts the usage with the tokenizer when the endpoint sends none', async () => {
    const reply = 'Systolic blood pressure of 300 mmHg is implausible.';
    const { gateway } = await gatewayFor([{ reply, stream: { sendUsage: false } }]);

    const { response } = await streamed(gateway);

    expect(response.usage.completionTokens).toBe(countTokens(reply));
    const promptText = countTokens('You check trial data.') + countTokens('Is SBP 300 mmHg plausible?');
    expect(response.usage.promptTokens).toBeGreaterThan(promptText);
    expect(response.usage.promptTokens).toBeLessThan(promptText + 20);
  });

  it('stops reading when the signal is aborted mid-stream and rejects with CANCELLED', async () => {
    const reply = 'A long answer about blood pressure. '.repeat(20);
    // The model stalls after a few pieces, so the abort lands mid-stream however slow the machine.
    const { gateway, server } = await gatewayFor([{ reply, stream: { stallAfterChunks: 6 } }]);
    const controller = new AbortController();
    const deltas: ChatDelta[] = [];

    const call = gateway.chat({ ...question, signal: controller.signal, onDelta: (d) => deltas.push(d) });
    await waitFor(async () => deltas.length >= 3, 'three deltas', 5000, 5);
    controller.abort();
    const error = await failure(call);

    expect(error.code).toBe('CANCELLED');
    expect(error.status).toBe(499);
    expect(error.message).toMatch(/cancelled/);
    await waitFor(async () => server.requests[0]?.stream?.isClientGone === true, 'the model server to see the client go', 5000, 10);
    expect(server.requests[0]!.stream!.chunksSent).toBeLessThan(server.requests[0]!.stream!.chunksPlanned);
    expect(server.requests).toHaveLength(1);
  });

  it('passes on a stream held mid-answer, then the rest once the model goes on (scripted resume)', async () => {
    const reply = 'Part one of the answer, then part two.';
    const { gateway, server } = await gatewayFor([{ reply, stream: { pieceChars: 4, stallAfterChunks: 3 } }]);
    const deltas: ChatDelta[] = [];

    const call = gateway.chat({ ...question, onDelta: (d) => deltas.push(d) });
    const text = () => deltas.map((d) => (d.type === 'text' ? d.text : '')).join('');
    await waitFor(async () => server.requests[0]?.stream?.chunksSent === 3 && text() !== '', 'the pieces before the hold', 5000, 5);
    const held = text();
    expect(reply.startsWith(held) && held.length < reply.length, held).toBe(true);
    expect(server.requests[0]!.stream!.isComplete).toBe(false);
    server.requests[0]!.stream!.resume();
    const response = await call;

    expect(response.content).toBe(reply);
    expect(text()).toBe(reply);
    expect(server.requests[0]!.stream).toMatchObject({ isComplete: true, isClientGone: false });
  });

  it('rejects with CANCELLED without calling the endpoint when the signal is already aborted', async () => {
    const { gateway, server } = await gatewayFor([{ reply: 'unused' }]);
    const error = await failure(gateway.chat({ ...question, signal: AbortSignal.abort(), onDelta: () => {} }));
    expect(error.code).toBe('CANCELLED');
    expect(server.requests).toHaveLength(0);
  });

  it('maps HTTP errors before the stream starts as a plain call does', async () => {
    const { gateway, server } = await gatewayFor([
      { status: 401, body: { error: { message: `Incorrect API key provided: ${apiKey}` } } },
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 429, headers: { 'retry-after': '0' } },
    ]);

    const auth = await failure(streamed(gateway));
    expect(auth.code).toBe('LLM_AUTH_FAILED');
    expect(operatorDetailOf(auth)).toMatch(/LLM_API_KEY/);
    expect(JSON.stringify(auth)).not.toContain(apiKey);

    const limited = await failure(streamed(gateway));
    expect(limited.code).toBe('LLM_RATE_LIMITED');
    expect(server.requests).toHaveLength(4);
  });

  it('gives LLM_TIMEOUT when the stream goes quiet longer than the timeout, and LLM_BAD_RESPONSE when it is cut off', async () => {
    const { gateway } = await gatewayFor(
      [
        { reply: 'slow and then silent', stream: { stallAfterChunks: 2 } },
        { reply: 'cut off half-way through', stream: { dropAfterChunks: 3 } },
      ],
      { timeoutMs: 150, maxRetries: 0 },
    );

    const quiet = await failure(streamed(gateway));
    expect(quiet.code).toBe('LLM_TIMEOUT');
    expect(quiet.message).toMatch(/^The language model service (did not answer in time|stopped sending its answer part-way)\. Try again in a few minutes/);
    expect(operatorDetailOf(quiet)).toMatch(/LLM_TIMEOUT_MS/);

    const dropped = await failure(streamed(gateway));
    expect(['LLM_BAD_RESPONSE', 'LLM_UNAVAILABLE']).toContain(dropped.code);
    expect(operatorDetailOf(dropped)).toMatch(/stream|connect|terminated/i);
    // Neither tells the user where the model runs; both tell the operator.
    for (const error of [quiet, dropped]) {
      expect(JSON.stringify(error.toJSON())).not.toMatch(/127\.0\.0\.1|http:/);
      expect(operatorDetailOf(error)).toMatch(/http:\/\/127\.0\.0\.1/);
    }
  });

  it('lets an error thrown by onDelta through unchanged and stops reading', async () => {
    const { gateway, server } = await gatewayFor([{ reply: 'x'.repeat(400), stream: { stallAfterChunks: 3 } }]);
    const mine = new Error('the client went away');
    const error = await gateway.chat({ ...question, onDelta: () => { throw mine; } }).catch((e: unknown) => e);
    expect(error).toBe(mine);
    await waitFor(async () => server.requests[0]?.stream?.isClientGone === true, 'the model server to see the client go', 5000, 10);
  });

  it('records one llm span with the assembled answer and usage for a streamed call', async () => {
    const { gateway } = await gatewayFor([{ reply: '<think>hmm</think>Implausible.', usage: { prompt_tokens: 30, completion_tokens: 5 } }]);
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'gateway-stream-span' });

    await gateway.chat({ ...question, onDelta: () => {} }, run);

    const spans = (await store.get(run.traceId, ALL_TRACES))?.spans;
    expect(spans).toHaveLength(1);
    expect(spans?.[0]).toMatchObject({ kind: 'llm', status: 'success', promptTokens: 30, completionTokens: 5, output: { content: 'Implausible.', reasoning: 'hmm', finishReason: 'stop' } });
  });
});
