import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngines } from '../../runtime/engines/index.js';
import { createLogger } from '../../core/logger.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { readEventStream, type ReceivedEvent } from '../../testing/read-event-stream.js';
import { startScriptedDify, type DifyStep, type ScriptedDify } from '../../testing/scripted-dify.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../server.js';

const APP_KEY = 'app-Dify-Secret-Key-0123456789abcdef';

/** Dify steps as the notes (section 5) list them: a cited chat answer, an agent with a tool, and the failures. */
const chatAnswer = (parts: string[], extra: Record<string, unknown> = {}): DifyStep => ({
  events: [
    ...parts.map((answer) => ({ event: 'message', answer })),
    'ping',
    {
      event: 'message_end',
      metadata: {
        usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
        retriever_resources: [{ position: 1, dataset_id: 'ds-1', dataset_name: 'Protocol', document_id: 'doc-1', document_name: 'protocol.pdf', segment_id: 'seg-42', segment_position: 7, score: 0.87, content: 'Visit 2 is at week 4 plus or minus 3 days.' }],
      },
      ...extra,
    },
  ],
});

describe.each(testEngines())('scenarios on a Dify app (%s)', (engine) => {
  let dify: ScriptedDify;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let url: string;
  let token: string;
  let userId: string;
  let user: Awaited<ReturnType<typeof ctx.users.create>>['user'];
  const logLines: string[] = [];
  const responses: string[] = [];

  beforeAll(async () => {
    dify = await startScriptedDify();
    const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-dify-'));
    const scenario = (id: string, mode: string, keyEnv = 'DIFY_TEST_APP_KEY') => `id: ${id}\nname: ${id}\ndescription: A Dify ${mode} app\nengine:\n  type: dify\n  base_url: ${dify.baseURL}\n  api_key_env: ${keyEnv}\n  app_mode: ${mode}\n`;
    writeFileSync(path.join(dir, 'chat.yaml'), scenario('dify-chat', 'chat'));
    writeFileSync(path.join(dir, 'agent.yaml'), scenario('dify-agent', 'agent'));
    writeFileSync(path.join(dir, 'unset.yaml'), scenario('dify-unset', 'chat', 'DIFY_NOBODY_SET_THIS'));
    writeFileSync(path.join(dir, 'builtin.yaml'), 'id: plain\nname: Plain\nsystem_prompt: Be brief.\n');
    const sink = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done(); } });
    // The stand-in Dify listens on loopback, which a Dify base URL may name only when the administrator allows it.
    const base = await buildTestContext({ engine, env: { SCENARIOS_DIR: dir, DIFY_ALLOWED_HOSTS: '127.0.0.1' }, logger: createLogger('debug', sink) });
    // The key comes from the server's environment; retries wait 1 ms here so the 429 cases stay fast.
    ctx = { ...base, engines: createEngines({ dify: { env: { DIFY_TEST_APP_KEY: APP_KEY }, secrets: base.secrets, retryDelaysMs: [1, 1], allowedHosts: base.config.dify.allowedHosts } }) };
    app = await buildServer(ctx, { serveConsole: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    const created = await ctx.users.create({ name: 'coordinator', role: 'coordinator' });
    token = created.token;
    user = created.user;
    userId = user.id;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await dify?.close();
  });

  const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });

  async function run(body: Record<string, unknown>): Promise<{ status: number; result: any }> {
    const response = await fetch(`${url}/api/agent/run`, { method: 'POST', headers: headers(), body: JSON.stringify(body) });
    const text = await response.text();
    responses.push(text);
    return { status: response.status, result: JSON.parse(text) };
  }

  async function stream(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
    return fetch(`${url}/api/agent/run/stream`, { method: 'POST', headers: { ...headers(), accept: 'text/event-stream' }, body: JSON.stringify(body), signal });
  }

  async function streamed(body: Record<string, unknown>): Promise<ReceivedEvent[]> {
    const events: ReceivedEvent[] = [];
    for await (const event of readEventStream(await stream(body))) events.push(event);
    responses.push(JSON.stringify(events));
    return events;
  }

  it('lists a Dify scenario like any other, with its engine and never its URL or key variable', async () => {
    const response = await fetch(`${url}/api/scenarios`, { headers: headers() });
    const text = await response.text();
    const listed = (JSON.parse(text) as { scenarios: Array<Record<string, unknown>> }).scenarios;
    expect(listed.find((s) => s.id === 'dify-agent')).toMatchObject({ name: 'dify-agent', description: 'A Dify agent app', engine: { type: 'dify', appMode: 'agent' }, tools: [], rag: { enabled: false } });
    expect(listed.find((s) => s.id === 'plain')).toMatchObject({ engine: { type: 'builtin' } });
    expect(text).not.toContain('DIFY_TEST_APP_KEY');
    expect(text).not.toContain(dify.baseURL);
  });

  it('answers a chat app from its streamed deltas, with references, as our user and under our trace id', async () => {
    dify.push(chatAnswer(['Visit 2 is at ', 'week 4 [1].']));
    const { status, result } = await run({ scenarioId: 'dify-chat', input: 'When is visit 2?' });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'success', answer: 'Visit 2 is at week 4 [1].', rawOutput: 'Visit 2 is at week 4 [1].', error: '', toolCalls: [], modelName: 'dify:chat' });
    expect(result.references).toEqual([
      { documentId: 'doc-1', scenarioId: 'dify-chat', collection: 'Protocol', sourceFile: 'protocol.pdf', chunkId: 'seg-42', chunkIndex: 7, content: 'Visit 2 is at week 4 plus or minus 3 days.', score: 0.87 },
    ]);
    const request = dify.requests.at(-1)!;
    expect(request.body).toMatchObject({ query: 'When is visit 2?', user: userId, response_mode: 'streaming', inputs: {} });
    expect(request.body.conversation_id).toBeUndefined();
    expect(request.headers.authorization).toBe(`Bearer ${APP_KEY}`);
    expect(request.headers['x-trace-id']).toBe(result.traceId);

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace?.status).toBe('success');
    const span = trace!.spans.find((s) => s.name === 'dify:chat-messages');
    expect(span).toMatchObject({ kind: 'llm', status: 'success', promptTokens: 120, completionTokens: 30 });
  });

  it('streams the same events as the loop: run_started, text deltas, tools from agent_thought, then the result', async () => {
    dify.push({
      events: [
        { event: 'agent_thought', id: 'th-1', position: 1, thought: '', tool: 'check_required_fields', tool_input: '{"check_required_fields": {"form": "visit_2"}}', observation: '' },
        'ping',
        { event: 'agent_thought', id: 'th-1', position: 1, thought: '', tool: 'check_required_fields', tool_input: '{"check_required_fields": {"form": "visit_2"}}', observation: '{"check_required_fields": "3 missing"}' },
        { event: 'agent_message', answer: 'Three fields ' },
        { event: 'agent_message', answer: 'are missing.' },
        { event: 'message', answer: 'Three fields are missing.' },
        { event: 'message_end', metadata: { usage: { prompt_tokens: 0, completion_tokens: 0 } } },
      ],
    });
    const events = await streamed({ scenarioId: 'dify-agent', input: 'What is missing at visit 2?' });
    const names = events.map((e) => e.event);
    expect(names).toEqual(['run_started', 'tool_call_started', 'tool_call_finished', 'text_delta', 'text_delta', 'result']);
    expect(events[1]!.data).toMatchObject({ name: 'check_required_fields', arguments: '{"form":"visit_2"}' });
    const result = events.at(-1)!.data;
    // The closing message repeats the agent_message deltas; it is not appended again.
    expect(result).toMatchObject({ status: 'success', answer: 'Three fields are missing.', modelName: 'dify:agent' });
    expect(result.toolCalls).toEqual([{ toolName: 'check_required_fields', success: true, arguments: { form: 'visit_2' }, result: '3 missing', error: '' }]);
    expect(events[0]!.data).toMatchObject({ traceId: result.traceId, conversationId: result.conversationId });
  });

  it('replaces the answer on message_replace (moderation)', async () => {
    dify.push({ events: [{ event: 'message', answer: 'Something unsafe' }, { event: 'message_replace', answer: 'This answer was withheld.', reason: 'moderation' }, { event: 'message_end', metadata: {} }] });
    const { result } = await run({ scenarioId: 'dify-chat', input: 'Tell me something' });
    expect(result).toMatchObject({ status: 'success', answer: 'This answer was withheld.' });
  });

  it('continues a continued conversation in Dify, and logs both turns in ours', async () => {
    dify.push(chatAnswer(['Week 4.']), chatAnswer(['Plus or minus 3 days.']));
    const first = (await run({ scenarioId: 'dify-chat', input: 'When is visit 2?' })).result;
    const difyConversation = (await ctx.conversations.engineRef(first.conversationId, user))!;
    expect(difyConversation.type).toBe('dify');
    const second = (await streamed({ scenarioId: 'dify-chat', input: 'And its window?', conversationId: first.conversationId })).at(-1)!.data;
    expect(second).toMatchObject({ status: 'success', conversationId: first.conversationId, answer: 'Plus or minus 3 days.' });
    expect(dify.requests.at(-1)!.body.conversation_id).toBe(difyConversation.conversationId);
    const log = await fetch(`${url}/api/conversations/${first.conversationId}`, { headers: headers() }).then((r) => r.json() as Promise<{ turns: Array<{ role: string; content: string }> }>);
    expect(log.turns.map((t) => [t.role, t.content])).toEqual([
      ['user', 'When is visit 2?'],
      ['assistant', 'Week 4.'],
      ['user', 'And its window?'],
      ['assistant', 'Plus or minus 3 days.'],
    ]);
  });

  it('fails naming app_unavailable, without retrying it', async () => {
    const before = dify.requests.length;
    dify.push({ status: 400, body: { code: 'app_unavailable', message: 'App unavailable, please check your app configurations.', status: 400 } });
    const { status, result } = await run({ scenarioId: 'dify-chat', input: 'Hello?' });
    expect(status).toBe(200);
    expect(result.status).toBe('failed');
    expect(result.error).toContain('app_unavailable');
    expect(result.error).toContain('dify-chat');
    expect(dify.requests.length - before).toBe(1);
    expect((await ctx.trace.get(result.traceId, ALL_TRACES))?.status).toBe('failed');
  });

  it('fails naming invalid_param through the stream as a result, not an error event', async () => {
    dify.push({ status: 400, body: { code: 'invalid_param', message: 'Agent Chat App does not support blocking mode', status: 400 } });
    const events = await streamed({ scenarioId: 'dify-agent', input: 'Hello?' });
    expect(events.map((e) => e.event)).toEqual(['run_started', 'result']);
    expect(events.at(-1)!.data).toMatchObject({ status: 'failed' });
    expect(events.at(-1)!.data.error).toContain('invalid_param');
  });

  it('retries too_many_requests with backoff, then answers', async () => {
    const before = dify.requests.length;
    const busy: DifyStep = { status: 429, body: { code: 'too_many_requests', message: 'Too many requests. Please try again later.', status: 429 } };
    dify.push(busy, busy, chatAnswer(['Done.']));
    const { result } = await run({ scenarioId: 'dify-chat', input: 'Busy?' });
    expect(result).toMatchObject({ status: 'success', answer: 'Done.' });
    expect(dify.requests.length - before).toBe(3);
  });

  it('fails naming too_many_requests when every bounded try is refused', async () => {
    const before = dify.requests.length;
    const busy: DifyStep = { status: 429, body: { code: 'too_many_requests', message: 'Too many requests.', status: 429 } };
    dify.push(busy, busy, busy);
    const events = await streamed({ scenarioId: 'dify-chat', input: 'Busy?' });
    expect(events.at(-1)!.data.status).toBe('failed');
    expect(events.at(-1)!.data.error).toContain('too_many_requests');
    expect(dify.requests.length - before).toBe(3);
  });

  it('keeps the partial answer of a stream that ends in an error event, and names its code', async () => {
    dify.push({ events: [{ event: 'message', answer: 'The inclusion criteria are' }, { event: 'error', status: 400, code: 'completion_request_error', message: 'The model timed out.' }] });
    const events = await streamed({ scenarioId: 'dify-chat', input: 'Who can enrol?' });
    expect(events.filter((e) => e.event === 'text_delta').map((e) => e.data.text)).toEqual(['The inclusion criteria are']);
    const result = events.at(-1)!.data;
    expect(result).toMatchObject({ status: 'failed', answer: 'The inclusion criteria are' });
    expect(result.error).toContain('completion_request_error');
  });

  it('fails a stream that ends without message_end, keeping what came', async () => {
    dify.push({ events: [{ event: 'workflow_finished', data: { status: 'succeeded' } }, { event: 'message', answer: 'Half an' }] });
    const { result } = await run({ scenarioId: 'dify-chat', input: 'Cut off?' });
    expect(result).toMatchObject({ status: 'failed', answer: 'Half an' });
    expect(result.error).toContain('message_end');
  });

  it('stops the Dify task when the client closes the stream, and the run is cancelled', async () => {
    dify.push({ events: [{ event: 'message', answer: 'Thinking about it' }], holdOpen: true });
    const controller = new AbortController();
    let traceId = '';
    const response = await stream({ scenarioId: 'dify-chat', input: 'A long question' }, controller.signal);
    for await (const event of readEventStream(response)) {
      if (event.event === 'run_started') traceId = event.data.traceId;
      if (event.event === 'text_delta') break;
    }
    controller.abort();
    await waitFor(async () => dify.stops.length === 1, 'the Dify task to be stopped');
    expect(dify.stops[0]!.path).toMatch(/^\/v1\/chat-messages\/task-\d+\/stop$/);
    expect(dify.stops[0]!.body).toEqual({ user: userId });
    await waitFor(async () => (await ctx.trace.get(traceId, ALL_TRACES))?.status === 'cancelled', 'the trace to be cancelled');
  });

  it('gives up a stream gone silent (not even a ping), keeps what came and stops the Dify task', async () => {
    const engines = ctx.engines;
    ctx.engines = createEngines({ dify: { env: { DIFY_TEST_APP_KEY: APP_KEY }, secrets: ctx.secrets, idleTimeoutMs: 300, allowedHosts: ctx.config.dify.allowedHosts } });
    try {
      const stopsBefore = dify.stops.length;
      dify.push({ events: ['ping', { event: 'message', answer: 'Still there' }], holdOpen: true });
      const { result } = await run({ scenarioId: 'dify-chat', input: 'Are you there?' });
      expect(result).toMatchObject({ status: 'failed', answer: 'Still there' });
      expect(result.error).toContain('sent nothing for 0 s');
      expect(dify.stops.length - stopsBefore).toBe(1);
    } finally {
      ctx.engines = engines;
    }
  });

  it('fails naming unauthorized when Dify refuses the key', async () => {
    const engines = ctx.engines;
    ctx.engines = createEngines({ dify: { env: { DIFY_TEST_APP_KEY: 'not-an-app-key-0000' }, secrets: ctx.secrets, allowedHosts: ctx.config.dify.allowedHosts } });
    try {
      const { status, result } = await run({ scenarioId: 'dify-chat', input: 'Hello?' });
      expect(status).toBe(200);
      expect(result.status).toBe('failed');
      expect(result.error).toContain('unauthorized (HTTP 401)');
      expect(result.error).toContain("this app's API key");
    } finally {
      ctx.engines = engines;
    }
  });

  it('refuses a scenario whose key variable is unset with a 409 naming it, before calling Dify', async () => {
    const before = dify.requests.length;
    const plain = await run({ scenarioId: 'dify-unset', input: 'Hello?' });
    expect(plain.status).toBe(409);
    expect(plain.result).toMatchObject({ code: 'CONFIG_MISSING' });
    expect(plain.result.message).toContain('DIFY_NOBODY_SET_THIS');
    const streamedResponse = await stream({ scenarioId: 'dify-unset', input: 'Hello?' });
    expect(streamedResponse.status).toBe(409);
    expect(streamedResponse.headers.get('content-type')).toMatch(/json/);
    expect(await streamedResponse.text()).toContain('DIFY_NOBODY_SET_THIS');
    expect(dify.requests.length).toBe(before);
  });

  it('keeps the app key out of every trace, response and log line, even when Dify echoes it', async () => {
    dify.push({ status: 400, body: { code: 'invalid_param', message: `Key ${APP_KEY} is not valid for this app`, status: 400 } });
    const { result } = await run({ scenarioId: 'dify-chat', input: 'Echo?' });
    expect(result.error).toContain('invalid_param');
    const traces = await ctx.trace.list(ALL_TRACES, { limit: 100 });
    const full = await Promise.all(traces.map((t) => ctx.trace.get(t.id, ALL_TRACES)));
    expect(full.length).toBeGreaterThan(5);
    expect(JSON.stringify(full)).not.toContain(APP_KEY);
    expect(responses.join('\n')).not.toContain(APP_KEY);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(APP_KEY);
  });
});
