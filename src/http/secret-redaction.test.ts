import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../core/db/connect.js';
import { createLogger } from '../core/logger.js';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { buildServer } from './server.js';

const ADMIN_TOKEN = 'admin-token-for-secret-tests-0123456789';

/**
 * Providers echo the key they were given in their 401 message. That message must not reach a log line (as
 * message, error, or cause several levels down), the AgentResult, or the stored trace.
 */
describe('an LLM error that echoes the API key', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function runAgainstEchoingModel(apiKey: string) {
    const model: ScriptedModel = await startScriptedModel([], { fallback: { status: 401, body: { error: { message: `Incorrect API key provided: ${apiKey}`, type: 'invalid_request_error', code: 'invalid_api_key' } } } });
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const ctx = await buildTestContext({ engine: 'pglite', llmBaseUrl: model.baseURL, env: { LLM_API_KEY: apiKey }, logger: createLogger('debug', sink) });
    const app = await buildServer(ctx, { serveConsole: false });
    cleanups.push(async () => {
      await app.close();
      await ctx.close();
      await model.close();
    });
    await ctx.users.bootstrapAdmin(ADMIN_TOKEN);
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { scenarioId: 'data-completeness', input: 'Check consent dates' } });
    const trace = await app.inject({ method: 'GET', url: `/api/traces/${response.json().traceId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const stored = JSON.stringify(await queryRows(ctx.db, sql`SELECT t.*, s.* FROM traces t LEFT JOIN spans s ON s.trace_id = t.id`));
    return { model, response, trace, stored, log: lines.join('') };
  }

  it('keeps a provider-shaped key (sk-...) out of logs, the AgentResult and the trace', async () => {
    const secret = 'sk-test-secret-123';
    const { model, response, trace, stored, log } = await runAgainstEchoingModel(secret);

    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'failed', error: expect.stringContaining('needs to check its API key') });
    // The operator's side (which setting) is in the log, with the cause.
    expect(log).toContain('Check LLM_API_KEY');
    expect(response.body).not.toContain(secret);
    expect(trace.statusCode).toBe(200);
    expect(trace.body).not.toContain(secret);
    expect(stored).not.toContain(secret);
    // The failure was logged, with its cause, just without the key.
    expect(log).toContain('agent run failed');
    expect(log).toContain('Incorrect API key provided: [redacted]');
    expect(log).not.toContain(secret);
  });

  it('keeps a key of no recognisable shape out of logs and the trace as well', async () => {
    const secret = 'local-vllm-key-7f3a9b2c';
    const { response, trace, stored, log } = await runAgainstEchoingModel(secret);

    expect(response.json().status).toBe('failed');
    expect(log).toContain('agent run failed');
    for (const text of [response.body, trace.body, stored, log]) expect(text).not.toContain(secret);
  });
});
