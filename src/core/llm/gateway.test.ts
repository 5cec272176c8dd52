import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel, type ScriptedStep } from '../../testing/scripted-model.js';
import { openTestDatabase } from '../../testing/test-database.js';
import type { LlmConfig } from '../config.js';
import type { Database } from '../db/connect.js';
import { ClinAgentError } from '../errors.js';
import { ALL_TRACES, createTraceStore } from '../trace/store.js';
import { operatorDetailOf } from './errors.js';
import { createLlmGateway } from './gateway.js';
import { imagePart, textPart, type ChatRequest, type ToolSpec } from './types.js';

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

/** A gateway pointed at a fresh scripted server; small timeout and two retries keep failure tests quick. */
async function gatewayFor(steps: ScriptedStep[], overrides: Partial<LlmConfig> = {}) {
  model = await startScriptedModel(steps);
  const config: LlmConfig = { baseUrl: model.baseURL, model: 'qwen-test', apiKey, timeoutMs: 300, maxRetries: 2, ...overrides };
  return { gateway: createLlmGateway(config), server: model };
}

/** Awaits a promise expected to reject with a ClinAgentError and returns that error. */
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

describe('createLlmGateway', () => {
  it('returns the completion text, token usage and the model name the server reports', async () => {
    const { gateway, server } = await gatewayFor([{ reply: 'No: 300 mmHg is implausible.', model: 'qwen-test-2025-06', usage: { prompt_tokens: 21, completion_tokens: 9 } }]);

    const response = await gateway.chat({ ...question, temperature: 0.1, maxTokens: 200 });

    expect(gateway.isConfigured).toBe(true);
    expect(gateway.modelName).toBe('qwen-test');
    expect(response).toMatchObject({ content: 'No: 300 mmHg is implausible.', toolCalls: [], modelName: 'qwen-test-2025-06', finishReason: 'stop', usage: { promptTokens: 21, completionTokens: 9 } });
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${apiKey}` } });
    expect(server.requests[0]?.body).toMatchObject({ model: 'qwen-test', messages: question.messages, temperature: 0.1, max_tokens: 200 });
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });

  it('sends tools as OpenAI function tools with JSON Schema parameters and parses the tool calls back', async () => {
    const rate: ToolSpec = {
      name: 'calculate_rate',
      description: 'Compute a rate.',
      parameters: { type: 'object', properties: { numerator: { type: 'number' }, denominator: { type: 'number', exclusiveMinimum: 0 } }, required: ['numerator', 'denominator'] },
    };
    const { gateway, server } = await gatewayFor([{ toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 24, denominator: 30 }, id: 'call_rate_1' }] }]);

    const response = await gateway.chat({ ...question, tools: [rate] });

    expect(server.requests[0]?.body.tools).toEqual([{ type: 'function', function: { name: rate.name, description: rate.description, parameters: rate.parameters } }]);
    expect(response.toolCalls).toEqual([{ id: 'call_rate_1', name: 'calculate_rate', arguments: '{"numerator":24,"denominator":30}' }]);
    expect(JSON.parse(response.toolCalls[0]!.arguments)).toEqual({ numerator: 24, denominator: 30 });
    expect(response.finishReason).toBe('tool_calls');
    expect(response.content).toBe('');
  });

  it('passes vision content parts to the server unchanged', async () => {
    const image = `data:image/png;base64,${'iVBORw0KGgo'.repeat(50)}`;
    const { gateway, server } = await gatewayFor([{ reply: 'A 6 mm pigmented lesion.' }]);

    await gateway.chat({ messages: [{ role: 'user', content: [textPart('Describe this lesion.'), imagePart(image, 'high')] }] });

    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe this lesion.' },
          { type: 'image_url', image_url: { url: image, detail: 'high' } },
        ],
      },
    ]);
  });

  it('waits out a 429 with retry-after and succeeds on the second request', async () => {
    const { gateway, server } = await gatewayFor([{ status: 429, headers: { 'retry-after': '0' } }, { reply: 'ok after waiting' }]);

    const response = await gateway.chat(question);

    expect(response.content).toBe('ok after waiting');
    expect(server.requests).toHaveLength(2);
  });

  it('gives LLM_RATE_LIMITED when the endpoint still answers 429 after the retries', async () => {
    const limited: ScriptedStep = { status: 429, headers: { 'retry-after': '0' } };
    const { gateway, server } = await gatewayFor([limited, limited, limited]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_RATE_LIMITED');
    expect(server.requests).toHaveLength(3);
  });

  it('retries a 500 twice, then gives LLM_UNAVAILABLE after three requests', async () => {
    const { gateway, server } = await gatewayFor([{ status: 500 }, { status: 500 }, { status: 500 }, { reply: 'too late' }]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_UNAVAILABLE');
    expect(error.details).toMatchObject({ httpStatus: 500, model: 'qwen-test' });
    expect(server.requests).toHaveLength(3);
    // The user reads a plain sentence; the operator's detail (endpoint, the server's own words) is kept for the log and the trace.
    expect(error.message).toBe('The language model service failed (HTTP 500) and is unavailable right now. Try again later.');
    expect(JSON.stringify(error.toJSON())).not.toContain(server.baseURL);
    expect(operatorDetailOf(error)).toContain(server.baseURL);
    expect(operatorDetailOf(error)).toContain('scripted status 500');
  });

  it('gives LLM_TIMEOUT, naming LLM_TIMEOUT_MS to the operator only, when the endpoint stalls past the timeout', async () => {
    const { gateway, server } = await gatewayFor([{ stallMs: 10_000 }, { stallMs: 10_000 }, { stallMs: 10_000 }]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_TIMEOUT');
    expect(error.message).toBe('The language model service did not answer in time. Try again in a few minutes; if it keeps happening, tell your administrator.');
    expect(operatorDetailOf(error)).toContain('LLM_TIMEOUT_MS');
    expect(operatorDetailOf(error)).toContain('300 ms');
    expect(operatorDetailOf(error)).toContain(server.baseURL);
    expect(server.requests).toHaveLength(3);
  });

  it('gives LLM_AUTH_FAILED, naming LLM_API_KEY to the operator, without the key itself, on a 401', async () => {
    const { gateway, server } = await gatewayFor([{ status: 401, body: { error: { message: `Incorrect API key provided: ${apiKey}`, type: 'invalid_request_error', code: 'invalid_api_key' } } }]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_AUTH_FAILED');
    expect(error.message).toMatch(/refused ClinAgent's credentials \(HTTP 401\)\. An administrator needs to check its API key/);
    expect(operatorDetailOf(error)).toContain('LLM_API_KEY');
    expect(operatorDetailOf(error)).not.toContain(apiKey);
    expect(error.message).not.toContain(apiKey);
    expect(JSON.stringify(error.toJSON())).not.toContain(apiKey);
    expect(server.requests).toHaveLength(1);
  });

  it('gives LLM_REQUEST_REJECTED on a 404 without retrying', async () => {
    const { gateway, server } = await gatewayFor([{ status: 404, body: { error: { message: 'The model `qwen-test` does not exist', type: 'invalid_request_error' } } }]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_REQUEST_REJECTED');
    expect(error.message).toMatch(/does not know the configured model/);
    expect(operatorDetailOf(error)).toContain('"qwen-test"');
    expect(server.requests).toHaveLength(1);
  });

  it('gives LLM_BAD_RESPONSE for a 200 without choices', async () => {
    const { gateway } = await gatewayFor([{ rawBody: '{"choices": []}' }]);

    const error = await failure(gateway.chat(question));

    expect(error.code).toBe('LLM_BAD_RESPONSE');
  });

  it('is not configured without a base URL and model, and says which variables to set', async () => {
    const gateway = createLlmGateway({ timeoutMs: 300, maxRetries: 2 });

    expect(gateway.isConfigured).toBe(false);
    const error = await failure(gateway.chat(question));
    expect(error.code).toBe('LLM_NOT_CONFIGURED');
    expect(error.message).toContain('LLM_BASE_URL');
    expect(error.message).toContain('LLM_MODEL');
    expect(error.details).toEqual({ missing: ['LLM_BASE_URL', 'LLM_MODEL'] });
    expect(() => gateway.assertConfigured()).toThrow(expect.objectContaining({ code: 'LLM_NOT_CONFIGURED' }));

    const withoutModel = createLlmGateway({ baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 300, maxRetries: 2 });
    expect(withoutModel.isConfigured).toBe(false);
    expect((await failure(withoutModel.chat(question))).details).toEqual({ missing: ['LLM_MODEL'] });
  });

  it('records an llm span with the token usage on the trace', async () => {
    const store = createTraceStore(database.db, { secrets: [apiKey] });
    const run = await store.start({ kind: 'agent', name: 'gateway-span' });
    const { gateway } = await gatewayFor([{ reply: 'Implausible.', usage: { prompt_tokens: 40, completion_tokens: 2 } }]);

    await gateway.chat(question, run);
    await run.finish({ status: 'success' });

    const view = await store.get(run.traceId, ALL_TRACES);
    expect(view?.spans).toHaveLength(1);
    expect(view?.spans[0]).toMatchObject({
      kind: 'llm',
      name: 'qwen-test',
      status: 'success',
      promptTokens: 40,
      completionTokens: 2,
      input: { model: 'qwen-test', messages: question.messages },
      output: { content: 'Implausible.', toolCalls: [], finishReason: 'stop' },
    });
    expect(view).toMatchObject({ promptTokens: 40, completionTokens: 2 });
  });

  it('records a failed llm span when the call fails, with the LLM error and no key', async () => {
    const store = createTraceStore(database.db, { secrets: [apiKey] });
    const run = await store.start({ kind: 'agent', name: 'gateway-failed-span' });
    const { gateway } = await gatewayFor([{ status: 401, body: { error: { message: `bad key ${apiKey}` } } }]);

    await expect(gateway.chat(question, run)).rejects.toMatchObject({ code: 'LLM_AUTH_FAILED' });

    const view = await store.get(run.traceId, ALL_TRACES);
    expect(view?.spans).toHaveLength(1);
    expect(view?.spans[0]).toMatchObject({ kind: 'llm', status: 'failed', promptTokens: 0 });
    // The trace keeps what the operator needs: the endpoint and the setting to check.
    expect(view?.spans[0]?.error).toMatch(/LLM_API_KEY/);
    expect(view?.spans[0]?.error).toContain(model!.baseURL);
    expect(JSON.stringify(view)).not.toContain(apiKey);
  });

  it('records an unconfigured call as a failed span too', async () => {
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'gateway-unconfigured' });

    await expect(createLlmGateway({ timeoutMs: 300, maxRetries: 2 }).chat(question, run)).rejects.toMatchObject({ code: 'LLM_NOT_CONFIGURED' });

    expect((await store.get(run.traceId, ALL_TRACES))?.spans.map((s) => s.status)).toEqual(['failed']);
  });

  it('stores a summary of an image data URL in the span input, not the image', async () => {
    const base64 = 'iVBORw0KGgoAAAANSUhEUgAA'.repeat(2_000);
    const image = `data:image/png;base64,${base64}`;
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'gateway-image' });
    const { gateway, server } = await gatewayFor([{ reply: 'Seborrhoeic keratosis.' }]);

    await gateway.chat({ messages: [{ role: 'user', content: [textPart('What is this?'), imagePart(image)] }] }, run);

    expect(server.requests[0]?.body.messages[0].content[1].image_url.url).toBe(image);
    const span = (await store.get(run.traceId, ALL_TRACES))?.spans[0];
    const parts = (span?.input as { messages: Array<{ content: Array<{ type: string; text?: string; image_url?: { url: string } }> }> }).messages[0]!.content;
    expect(parts[0]).toEqual({ type: 'text', text: 'What is this?' });
    expect(parts[1]?.image_url?.url).toMatch(/^data:image\/png;base64,.*\(\d+ chars\)$/);
    expect(parts[1]?.image_url?.url).toContain(`(${image.length} chars)`);
    expect(parts[1]!.image_url!.url.length).toBeLessThan(100);
    expect(JSON.stringify(span)).not.toContain(base64.slice(0, 200));
  });
});
