import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmGateway } from '../core/llm/gateway.js';
import { createLogger } from '../core/logger.js';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { errorHandler } from './error-handler.js';

/**
 * A route whose model call fails answers with the LLM_* error as every route does: the person gets a plain
 * sentence and no endpoint, and the server log keeps what the operator needs (the endpoint, the setting, what the
 * model server said), through the one error handler.
 */
describe('an LLM error through the HTTP error handler', () => {
  let model: ScriptedModel;
  let app: ReturnType<typeof Fastify>;
  const lines: string[] = [];

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { status: 503, body: { error: { message: 'vLLM engine dead: CUDA out of memory on worker gpu-3', type: 'server_error' } } } });
    const gateway = createLlmGateway({ baseUrl: model.baseURL, model: 'qwen-test', timeoutMs: 2000, maxRetries: 0 });
    const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    app = Fastify({ loggerInstance: createLogger('info', sink) });
    app.setErrorHandler(errorHandler);
    app.post('/ask', async () => gateway.chat({ messages: [{ role: 'user', content: 'Is SBP 300 plausible?' }] }));
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await model?.close();
  });

  it('answers 502 with a plain sentence, and logs the endpoint and the model server\u2019s words', async () => {
    const response = await app.inject({ method: 'POST', url: '/ask' });
    expect(response.statusCode).toBe(502);
    expect(response.json()).toEqual({ code: 'LLM_UNAVAILABLE', message: 'The language model service failed (HTTP 503) and is unavailable right now. Try again later.', details: { model: 'qwen-test', httpStatus: 503 } });
    expect(response.body).not.toContain('127.0.0.1');
    expect(response.body).not.toContain('CUDA');
    const log = lines.join('');
    expect(log).toContain(model.baseURL);
    expect(log).toContain('CUDA out of memory');
  });
});
