import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentStreamEvents, RUN_EVENT_NAMES } from '../../contract/index.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { readEventStream, type ReceivedEvent } from '../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../server.js';

/** The streaming route through a real listening server: fetch, SSE parsing and disconnects as a browser does them. */
describe('POST /api/agent/run/stream', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let url: string;
  let coordinator: string;
  let viewer: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    coordinator = (await ctx.users.create({ name: 'coordinator', role: 'coordinator' })).token;
    viewer = (await ctx.users.create({ name: 'viewer', role: 'viewer' })).token;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  const post = (body: unknown, token: string | null = coordinator, signal?: AbortSignal) =>
    fetch(`${url}/api/agent/run/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });

  async function allEvents(response: Response): Promise<ReceivedEvent[]> {
    const events: ReceivedEvent[] = [];
    for await (const event of readEventStream(response)) events.push(event);
    return events;
  }

  it('streams text deltas before the result, and the result is the AgentResult of the plain route', async () => {
    const reply = '{"answer": "Adults aged 18 to 75 with stage 1 or 2 hypertension [1].", "citations": ["[1]"], "confidence": "high"}';
    model.push({ reply, stream: { pieceChars: 6 } }, { reply });

    const response = await post({ scenarioId: 'protocol-qa', input: 'Who can enrol?' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await allEvents(response);

    const names = events.map((e) => e.event);
    expect(names.filter((n) => n === 'text_delta').length).toBeGreaterThan(5);
    expect(names.at(-1)).toBe('result');
    expect(names.indexOf('text_delta')).toBeLessThan(names.indexOf('result'));
    expect(names.filter((n) => n === 'result' || n === 'error')).toEqual(['result']);
    const text = events.filter((e) => e.event === 'text_delta').map((e) => e.data.text).join('');
    expect(text).toBe(reply);
    const result = events.at(-1)!.data;
    expect(result).toMatchObject({ status: 'success', answer: 'Adults aged 18 to 75 with stage 1 or 2 hypertension [1].', structuredOutput: { confidence: 'high' }, error: '' });
    expect(model.requests.at(-1)?.body).toMatchObject({ stream: true });

    // Same fields as POST /api/agent/run answers for the same reply.
    const plain = await fetch(`${url}/api/agent/run`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${coordinator}` }, body: JSON.stringify({ scenarioId: 'protocol-qa', input: 'Who can enrol?' }) });
    const plainResult = (await plain.json()) as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(Object.keys(plainResult).sort());
    expect(result.answer).toBe(plainResult.answer);

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace?.status).toBe('success');
  });

  it('sends tool calls as they start and finish, before the final answer', async () => {
    model.push(
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 24, denominator: 30, label: 'visit 2' }, id: 'call_rate' }] },
      { reply: '{"summary": "80% of visit 2 forms are complete.", "findings": [], "action_items": []}' },
    );

    const events = await allEvents(await post({ scenarioId: 'data-completeness', input: 'How complete is visit 2?' }));

    const names = events.map((e) => e.event);
    const started = names.indexOf('tool_call_started');
    const finished = names.indexOf('tool_call_finished');
    expect(started).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(finished);
    expect(finished).toBeLessThan(names.lastIndexOf('text_delta'));
    expect(events[started]!.data).toMatchObject({ type: 'tool_call_started', callId: 'call_rate', name: 'calculate_rate' });
    expect(JSON.parse(events[started]!.data.arguments)).toEqual({ numerator: 24, denominator: 30, label: 'visit 2' });
    expect(events[finished]!.data).toMatchObject({ type: 'tool_call_finished', callId: 'call_rate', name: 'calculate_rate', success: true });
    const result = events.at(-1)!;
    expect(result.event).toBe('result');
    expect(result.data.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculate_rate', success: true })]);
  });

  it('sends only names of the one run vocabulary, each shaped as the contract documents it, and one final result', async () => {
    model.push(
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 3, denominator: 4, label: 'visit 3' }, id: 'call_vocab' }], content: 'Computing.', stream: { pieceChars: 4 } },
      { reply: '{"summary": "75% of visit 3 forms are complete.", "findings": [], "action_items": []}', stream: { pieceChars: 8 } },
    );

    const events = await allEvents(await post({ scenarioId: 'data-completeness', input: 'How complete is visit 3?' }));

    const names = events.map((e) => e.event);
    expect(names.slice(0, -1).every((name) => (RUN_EVENT_NAMES as string[]).includes(name))).toBe(true);
    expect(names.filter((n) => n === 'result' || n === 'error')).toEqual(['result']);
    expect(new Set(names)).toEqual(new Set(['run_started', 'text_delta', 'tool_call_started', 'tool_call_finished', 'round_finished', 'result']));
    for (const { event, data } of events) expect(AgentStreamEvents[event as keyof typeof AgentStreamEvents].safeParse(data).error).toBeUndefined();
  });

  it('stops calling the model when the client disconnects mid-stream, and marks the trace cancelled', async () => {
    const before = model.requests.length;
    // A tool call the model stalls in, after its first pieces: the server must close its own request to the model
    // (the model sees the client go), or it would wait on it, then run the tool and call the model a second time.
    model.push(
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 24, denominator: 30, label: 'a long label for visit two completion' } }], content: 'Let me compute the completion rate first.', stream: { pieceChars: 2, stallAfterChunks: 4 } },
      { reply: '{"summary": "should never be asked for"}' },
    );
    const controller = new AbortController();

    const response = await post({ scenarioId: 'data-completeness', input: 'How complete is visit 2?' }, coordinator, controller.signal);
    for await (const event of readEventStream(response)) {
      if (event.event === 'text_delta') break;
    }
    controller.abort();

    await waitFor(async () => model.requests[before]?.stream?.isClientGone, 'the server to stop reading the model stream', 10_000, 20);
    const [trace] = await waitFor(async () => {
      const traces = await ctx.trace.list(ALL_TRACES, { limit: 1 });
      return traces[0]?.status === 'cancelled' && traces;
    }, 'the run trace to be marked cancelled', 10_000, 50);
    expect(trace!.name).toBe('data-completeness');
    const stream = model.requests[before]!.stream!;
    expect(stream.chunksSent).toBeLessThan(stream.chunksPlanned);
    expect(model.requests).toHaveLength(before + 1);
  });

  it('answers JSON errors before the stream opens: no token 401, viewer 403, bad body 400, unknown scenario 404', async () => {
    const noToken = await post({ scenarioId: 'protocol-qa', input: 'x' }, null);
    expect(noToken.status).toBe(401);
    expect((await noToken.json()) as object).toMatchObject({ code: 'UNAUTHENTICATED' });

    const readOnly = await post({ scenarioId: 'protocol-qa', input: 'x' }, viewer);
    expect(readOnly.status).toBe(403);
    expect((await readOnly.json()) as object).toMatchObject({ code: 'FORBIDDEN' });

    const missing = await post({ scenarioId: 'protocol-qa' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toContain('body.input: is required');

    const unknown = await post({ scenarioId: 'nope', input: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/json/);
    expect((await unknown.json()) as object).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('is in the OpenAPI document as a text/event-stream response', async () => {
    const document = (await (await fetch(`${url}/api/openapi.json`, { headers: { authorization: `Bearer ${coordinator}` } })).json()) as any;
    const operation = document.paths['/api/agent/run/stream'].post;
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/event-stream']);
    expect(operation.responses['200'].description).toMatch(/text_delta.*result/s);
    expect(operation.requestBody.content['application/json'].schema.required).toEqual(['scenarioId', 'input']);
  });
});
