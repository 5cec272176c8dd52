import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_TRACES } from '../../core/trace/store.js';
import { createEngines } from '../../runtime/engines/index.js';
import { postEventStream, readEventStream, type ReceivedEvent } from '../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../server.js';

const SAMPLE_SIZE = { design: 'two_proportions', alpha: 0.05, power: 0.9, sides: 2, p1: 0.5, p2: 0.75 };
/** A declared answer schema: a summary and a whole count, both required. */
const REPORT_SCHEMA = '{ name: visit_report, schema: { type: object, properties: { summary: { type: string }, missing: { type: integer } }, required: [summary, missing] }, answer_field: summary }';

describe.each(testEngines())('scenarios on the OpenAI Agents SDK engine (%s)', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let url: string;
  let token: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-oa-'));
    const file = (id: string, body: string, engineType = 'openai-agents') => writeFileSync(path.join(dir, `${id}.yaml`), `id: ${id}\nname: ${id}\nengine: { type: ${engineType} }\n${body}`);
    file('oa-plain', 'system_prompt: Answer in one sentence.\nmodel: { temperature: 0.2 }\n');
    file('oa-tools', 'system_prompt: Use the calculator for sample sizes.\ntools: [calculate_sample_size]\nmax_tool_rounds: 2\n');
    file('oa-report', `system_prompt: Report the missing fields.\noutput_type: ${REPORT_SCHEMA}\n`);
    file('loop-report', `system_prompt: Report the missing fields.\noutput_type: ${REPORT_SCHEMA}\n`, 'builtin');
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, env: { SCENARIOS_DIR: dir, LLM_MAX_RETRIES: '0' } });
    app = await buildServer(ctx, { serveConsole: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    token = (await ctx.users.create({ name: 'coordinator', role: 'coordinator' })).token;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });

  async function run(body: Record<string, unknown>): Promise<{ status: number; result: any }> {
    const response = await fetch(`${url}/api/agent/run`, { method: 'POST', headers: headers(), body: JSON.stringify(body) });
    return { status: response.status, result: await response.json() };
  }

  const streamed = (body: Record<string, unknown>): Promise<ReceivedEvent[]> => postEventStream(`${url}/api/agent/run/stream`, token, body);

  /** The tool messages the model was sent back, in the order of its requests. */
  const toolMessages = (from: number) => model.requests.slice(from).flatMap((r) => (r.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool'));

  it('is listed with its engine by GET /api/agents and GET /api/scenarios', async () => {
    const agents = (await (await fetch(`${url}/api/agents`, { headers: headers() })).json()) as { agents: Array<Record<string, unknown>> };
    expect(agents.agents.find((a) => a.id === 'oa-tools')).toMatchObject({ kind: 'scenario', engine: { type: 'openai-agents' }, tools: ['calculate_sample_size'] });
    expect(agents.agents.find((a) => a.id === 'loop-report')).toMatchObject({ engine: { type: 'builtin' } });
    const scenarios = (await (await fetch(`${url}/api/scenarios`, { headers: headers() })).json()) as { scenarios: Array<Record<string, unknown>> };
    expect(scenarios.scenarios.find((s) => s.id === 'oa-plain')).toMatchObject({ engine: { type: 'openai-agents' } });
  });

  it('answers through POST /api/agent/run from the configured endpoint, on chat completions, with the scenario prompt', async () => {
    const before = model.requests.length;
    model.push({ reply: 'Visit 2 is at week 4.', usage: { prompt_tokens: 40, completion_tokens: 6 } });
    const { status, result } = await run({ scenarioId: 'oa-plain', input: 'When is visit 2?' });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'success', answer: 'Visit 2 is at week 4.', rawOutput: 'Visit 2 is at week 4.', error: '', toolCalls: [], modelName: 'scripted-model' });
    expect(result.conversationId).toEqual(expect.any(String));
    const request = model.requests.at(-1)!;
    expect(model.requests.length).toBe(before + 1);
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-test-secret-key-000000000000');
    expect(request.body).toMatchObject({ model: 'scripted-model', temperature: 0.2 });
    expect(request.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Answer in one sentence.') });
    expect(request.body.messages.at(-1)).toEqual({ role: 'user', content: 'When is visit 2?' });

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace).toMatchObject({ status: 'success', name: 'oa-plain' });
    expect(trace!.spans.find((s) => s.name === 'openai-agents:run')).toMatchObject({ kind: 'llm', status: 'success', promptTokens: 40, completionTokens: 6 });

    // The conversation goes on: the next turn sends the first exchange before the new question.
    model.push({ reply: 'Week 8.' });
    const next = await run({ scenarioId: 'oa-plain', input: 'And visit 3?', conversationId: result.conversationId });
    expect(next.result).toMatchObject({ status: 'success', answer: 'Week 8.', conversationId: result.conversationId });
    const textOf = (content: unknown) => (typeof content === 'string' ? content : (content as Array<{ text: string }>).map((part) => part.text).join(''));
    const sent = model.requests.at(-1)!.body.messages.slice(1).map((m: { role: string; content: unknown }) => [m.role, textOf(m.content)]);
    expect(sent).toEqual([['user', 'When is visit 2?'], ['assistant', 'Visit 2 is at week 4.'], ['user', 'And visit 3?']]);
  });

  it('runs a tool call through our registry: a tool span in the trace, the result back to the model, the events streamed', async () => {
    const before = model.requests.length;
    model.push({ toolCalls: [{ name: 'calculate_sample_size', arguments: SAMPLE_SIZE }] }, { reply: 'About 80 per arm.' });
    const events = await streamed({ scenarioId: 'oa-tools', input: 'Sample size for 50% vs 75%?' });
    const result = events.find((e) => e.event === 'result')!.data as any;
    expect(result).toMatchObject({ status: 'success', answer: 'About 80 per arm.' });
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculate_sample_size', success: true, error: '' })]);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('run_started');
    expect(names).toEqual(expect.arrayContaining(['tool_call_started', 'tool_call_finished', 'round_finished', 'text_delta', 'result']));
    expect(events.find((e) => e.event === 'tool_call_started')!.data).toMatchObject({ round: 1, name: 'calculate_sample_size', callId: expect.any(String) });
    expect(events.find((e) => e.event === 'tool_call_finished')!.data).toMatchObject({ round: 1, name: 'calculate_sample_size', success: true });
    expect(events.find((e) => e.event === 'text_delta')!.data).toMatchObject({ text: 'About 80 per arm.' });

    // The offered tool is the registry's schema; what came back is the registry's result in the loop's data block.
    expect(model.requests[before]!.body.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'calculate_sample_size' }) })]);
    const [toolMessage] = toolMessages(before);
    expect(toolMessage!.content).toContain('tool_result');
    expect(result.toolCalls[0].result).toMatchObject({ total: 154 });
    expect(toolMessage!.content).toContain('"total": 154');

    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace!.spans.filter((s) => s.kind === 'tool')).toEqual([expect.objectContaining({ name: 'calculate_sample_size', status: 'success' })]);
  });

  it('has a bad tool argument refused by our registry, and the refusal sent back to the model', async () => {
    const before = model.requests.length;
    model.push({ toolCalls: [{ name: 'calculate_sample_size', arguments: { ...SAMPLE_SIZE, power: 'high' } }] }, { reply: 'I could not compute it.' });
    const { result } = await run({ scenarioId: 'oa-tools', input: 'Sample size?' });
    expect(result.status).toBe('success');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'calculate_sample_size', success: false, result: null });
    expect(result.toolCalls[0].error).toMatch(/^Invalid arguments for calculate_sample_size:\npower: /);
    expect(toolMessages(before)[0]!.content).toContain('Invalid arguments for calculate_sample_size');
    const trace = await ctx.trace.get(result.traceId, ALL_TRACES);
    expect(trace!.spans.find((s) => s.kind === 'tool')).toMatchObject({ name: 'calculate_sample_size', status: 'failed', error: expect.stringContaining('power') });
  });

  it('stops a model that keeps calling tools at the limit of model calls, with a failed result that says so', async () => {
    const before = model.requests.length;
    const call = { toolCalls: [{ name: 'calculate_sample_size', arguments: SAMPLE_SIZE }] };
    model.push(call, call, call);
    const { status, result } = await run({ scenarioId: 'oa-tools', input: 'Keep going.' });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'failed', answer: '' });
    expect(result.error).toContain('the limit of 3 model calls of scenario oa-tools was reached');
    expect(model.requests.length - before).toBe(3);
    expect((await ctx.trace.get(result.traceId, ALL_TRACES))?.status).toBe('failed');
    expect(result.toolCalls).toHaveLength(3);
  });

  it('refuses an answer that breaks the output schema as the built-in loop does: asked again, then a failed result', async () => {
    const bad = { reply: '{"summary": "Two fields missing", "missing": "two"}' };
    for (const scenarioId of ['oa-report', 'loop-report']) {
      const before = model.requests.length;
      model.push(bad, bad, bad);
      const { status, result } = await run({ scenarioId, input: 'What is missing at visit 2?' });
      expect(status).toBe(200);
      expect(result, scenarioId).toMatchObject({ status: 'failed', answer: '', error: 'The model gave no usable answer after 3 tries, so none is shown. Try again, or ask in other words.' });
      expect(model.requests.length - before, scenarioId).toBe(3);
      const correction = model.requests.at(-1)!.body.messages.at(-1);
      expect(correction, scenarioId).toMatchObject({ role: 'user', content: expect.stringContaining('Your answer could not be used:') });
      expect(correction.content, scenarioId).toContain('missing');
    }
    // Corrected on the second try: the checked object is the structured output, its answer field the answer.
    model.push(bad, { reply: '{"summary": "Two fields missing", "missing": 2}' });
    const { result } = await run({ scenarioId: 'oa-report', input: 'What is missing at visit 2?' });
    expect(result).toMatchObject({ status: 'success', answer: 'Two fields missing', structuredOutput: { summary: 'Two fields missing', missing: 2 } });
  });

  it('fails the run with a clear message when the model calls a tool the scenario does not offer', async () => {
    model.push({ toolCalls: [{ name: 'launch_rocket', arguments: {} }] });
    const { status, result } = await run({ scenarioId: 'oa-plain', input: 'Launch.' });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'failed', answer: '', toolCalls: [] });
    expect(result.error).toMatch(/^The model gave no usable answer \(.*launch_rocket.*\), so none is shown\./);
  });

  it('stops the SDK run when the client closes the stream, and the run is cancelled', async () => {
    const gate = model.gate();
    model.push({ reply: 'never read' });
    const controller = new AbortController();
    const response = await fetch(`${url}/api/agent/run/stream`, { method: 'POST', headers: { ...headers(), accept: 'text/event-stream' }, body: JSON.stringify({ scenarioId: 'oa-plain', input: 'A long question' }), signal: controller.signal });
    let traceId = '';
    for await (const event of readEventStream(response)) {
      if (event.event === 'run_started') traceId = event.data.traceId;
      break;
    }
    await gate.reached;
    controller.abort();
    await waitFor(async () => (await ctx.trace.get(traceId, ALL_TRACES))?.status === 'cancelled', 'the trace to be cancelled');
    gate.release();
  });

  it('gives a failed result naming the cause when the endpoint is down, never a 500', async () => {
    const engines = ctx.engines;
    ctx.engines = createEngines({ openaiAgents: { llm: { ...ctx.config.llm, baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 } } });
    try {
      const { status, result } = await run({ scenarioId: 'oa-plain', input: 'Anyone there?' });
      expect(status).toBe(200);
      expect(result).toMatchObject({ status: 'failed', answer: '', error: 'The language model service cannot be reached right now. Try again later; if it keeps happening, tell your administrator.' });
      expect((await ctx.trace.get(result.traceId, ALL_TRACES))?.status).toBe('failed');
    } finally {
      ctx.engines = engines;
    }
  });

  it('gives a failed result with the HTTP status when the endpoint refuses the call', async () => {
    model.push({ status: 500, body: { error: { message: 'overloaded' } } });
    const { status, result } = await run({ scenarioId: 'oa-plain', input: 'Hello?' });
    expect(status).toBe(200);
    expect(result).toMatchObject({ status: 'failed', error: 'The language model service failed (HTTP 500) and is unavailable right now. Try again later.' });
  });
});
