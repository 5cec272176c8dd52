import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeContext } from '../../context.js';
import { buildServer } from '../../http/server.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { createLogger } from '../logger.js';

/**
 * A run's spans, as an OTLP receiver (Jaeger, Tempo, Langfuse) gets them: a real agent run through the HTTP API,
 * against the scripted model, with a tool call, exported by the real OTLP/HTTP exporter to a receiver on loopback.
 */

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; arrayValue?: { values: OtlpValue[] } }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes: Array<{ key: string; value: OtlpValue }>; status?: { code?: number; message?: string } }
interface OtlpRequest { body: string; headers: http.IncomingHttpHeaders }

/** A plain OTLP/HTTP receiver: accepts POST /v1/traces (JSON, as the exporter sends it), keeps every request. */
async function startReceiver(): Promise<{ url: string; requests: OtlpRequest[]; spans(): Array<OtlpSpan & { resource: Record<string, unknown> }>; close(): Promise<void> }> {
  const requests: OtlpRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      requests.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    spans: () =>
      requests.flatMap((request) =>
        (JSON.parse(request.body) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: OtlpValue }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap((resourceSpans) =>
          resourceSpans.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, resource: attributesOf(resourceSpans.resource) }))),
        ),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function attributesOf(holder: { attributes: Array<{ key: string; value: OtlpValue }> }): Record<string, unknown> {
  const plain = (value: OtlpValue): unknown =>
    value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue ?? value.arrayValue?.values.map(plain));
  return Object.fromEntries(holder.attributes.map(({ key, value }) => [key, plain(value)]));
}

/** What the user, the model and the tool call say; none of it may leave without the content opt-in. */
const USER_TEXT = 'Check the wombat cohort; the coordinator can be reached at 13812345678';
const ANSWER_SUMMARY = 'The quokka records are complete; call 13812345678 about S007';
const PLANTED_IDENTIFIER = '13812345678';
const HEADER_SECRET = 'otel-receiver-secret-0123456789';

function scriptRun(model: ScriptedModel): void {
  model.push(
    { toolCalls: [{ name: 'query_demo_records', id: 'call_otel_1', arguments: { subject_ids: ['S007'], fields: ['baseline_sbp'], patient_phone: PLANTED_IDENTIFIER } }], usage: { prompt_tokens: 120, completion_tokens: 14 } },
    { reply: JSON.stringify({ summary: ANSWER_SUMMARY, completion_rate: 1, issues: [], action_items: [] }), model: 'scripted-model-2026', usage: { prompt_tokens: 200, completion_tokens: 31 } },
  );
}

/** The OTel trace id of a product trace id: the UUID's 32 hex digits (docs/telemetry.md). */
const hexOf = (traceId: string) => traceId.replace(/-/g, '');

describe.each(testEngines())('OpenTelemetry export of an agent run on %s', (engine) => {
  let model: ScriptedModel;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    model = await startScriptedModel();
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
    await model?.close();
  });

  /** A server on its own context; `env` adds OTel variables. Closed with closeContext, the path SIGTERM takes. */
  async function serverWith(env: Record<string, string>, logLines?: string[]) {
    const logger = logLines ? createLogger('warn', new Writable({ write: (chunk, _encoding, done) => { logLines.push(String(chunk)); done(); } })) : undefined;
    const ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, env, logger });
    const app = await buildServer(ctx, { serveConsole: false });
    const { token } = await ctx.users.create({ name: `otel-${Math.random().toString(36).slice(2)}`, role: 'coordinator' });
    const run = async () => {
      scriptRun(model);
      const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { authorization: `Bearer ${token}` }, payload: { scenarioId: 'data-completeness', input: USER_TEXT } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().status, response.body).toBe('success');
      return response.json().traceId as string;
    };
    const close = async () => {
      await app.close();
      await closeContext(ctx);
    };
    return { ctx, run, close };
  }

  const spansOf = (traceId: string) => receiver.spans().filter((span) => span.traceId === hexOf(traceId));
  const bodiesOf = (traceId: string) => receiver.requests.filter((request) => request.body.includes(hexOf(traceId))).map((request) => request.body).join('\n');
  const rootArrived = (traceId: string) => async () => spansOf(traceId).some((span) => span.name.startsWith('invoke_agent'));

  describe('by default (no content capture)', () => {
    let traceId: string;

    beforeAll(async () => {
      const server = await serverWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: `x-receiver-key=${HEADER_SECRET}`, OTEL_SERVICE_NAME: 'clinagent-otel-test' });
      traceId = await server.run();
      // closeContext flushes what is queued: no wait on the batch timer.
      await server.close();
      await waitFor(rootArrived(traceId), 'the run span at the receiver', 10_000);
    });

    it('sends invoke_agent, chat and execute_tool spans under the traceId the API returned, with the GenAI attributes', () => {
      const spans = spansOf(traceId);
      const root = spans.find((span) => span.name === 'invoke_agent data-completeness')!;
      expect(root, spans.map((span) => span.name).join(', ')).toBeDefined();
      expect(root.parentSpanId || undefined).toBeUndefined();
      expect(root.resource).toMatchObject({ 'service.name': 'clinagent-otel-test' });
      expect(attributesOf(root)).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'data-completeness', 'gen_ai.agent.name': 'data-completeness', 'gen_ai.provider.name': 'openai',
        'gen_ai.usage.input_tokens': 320, 'gen_ai.usage.output_tokens': 45, 'clinagent.run.status': 'success',
      });

      const chats = spans.filter((span) => span.name === 'chat scripted-model');
      expect(chats).toHaveLength(2);
      expect(chats.map(attributesOf)).toEqual([
        expect.objectContaining({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'scripted-model', 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 14, 'gen_ai.response.finish_reasons': ['tool_calls'] }),
        expect.objectContaining({ 'gen_ai.request.model': 'scripted-model', 'gen_ai.response.model': 'scripted-model-2026', 'gen_ai.usage.input_tokens': 200, 'gen_ai.usage.output_tokens': 31 }),
      ]);
      const tool = spans.find((span) => span.name === 'execute_tool query_demo_records')!;
      expect(tool).toBeDefined();
      expect(attributesOf(tool)).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'query_demo_records', 'gen_ai.tool.type': 'function' });

      // Every span hangs from the run's root, directly or through a step span, inside the one trace.
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const ancestry = (span: OtlpSpan): string[] => (span.parentSpanId ? [span.parentSpanId, ...ancestry(byId.get(span.parentSpanId)!)] : []);
      for (const span of [...chats, tool]) {
        expect(byId.has(span.parentSpanId!), `${span.name} has its parent in the trace`).toBe(true);
        expect(ancestry(span).at(-1), span.name).toBe(root.spanId);
      }
      // The tool ran after the first model call and before the second, as the store recorded it.
      expect(BigInt(tool.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(chats[0]!.endTimeUnixNano));
      expect(BigInt(tool.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(chats[1]!.startTimeUnixNano));
    });

    it('sends the configured headers, and no prompt, answer, tool argument, result, identifier or key in any span', () => {
      const exports = receiver.requests.filter((request) => request.body.includes(hexOf(traceId)));
      expect(exports.length).toBeGreaterThan(0);
      for (const request of exports) {
        expect(request.headers['x-receiver-key']).toBe(HEADER_SECRET);
        expect(request.headers['content-type']).toContain('application/json');
      }
      const sent = bodiesOf(traceId);
      // The user's words, the model's answer, the tool's arguments (S007) and result (the study's records), the system prompt.
      for (const said of ['wombat', 'quokka', 'S007', 'baseline_sbp', 'DEMO-HTN-01', 'clinical data manager', PLANTED_IDENTIFIER, 'sk-test-secret-key', HEADER_SECRET]) expect(sent, said).not.toContain(said);
      expect(sent).not.toMatch(/gen_ai\.(input|output)\.messages|gen_ai\.tool\.call\.(arguments|result)|clinagent\.(run|step)\.(input|output)/);
    });
  });

  it('with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true sends what was said, without the identifier in it', async () => {
    const server = await serverWith({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const traceId = await server.run();
    // A failure's text is content too: sent as the status message, through the same masks.
    const turn = await server.ctx.trace.start({ kind: 'consult', name: 'dermatology_consult', input: { message: 'rash' } });
    await turn.finish({ status: 'failed', error: `the model refused; the patient asked to be called at ${PLANTED_IDENTIFIER}` });
    await server.close();
    await waitFor(rootArrived(traceId), 'the run span at the receiver', 10_000);
    await waitFor(rootArrived(turn.traceId), 'the failed turn at the receiver', 10_000);
    const [failedTurn] = spansOf(turn.traceId);
    expect(failedTurn!.status).toEqual({ code: 2, message: 'the model refused; the patient asked to be called at [identifier removed]' });

    const spans = spansOf(traceId);
    const chats = spans.filter((span) => span.name.startsWith('chat ')).map(attributesOf);
    expect(String(chats[0]!['gen_ai.input.messages'])).toContain('wombat');
    expect(String(chats[1]!['gen_ai.output.messages'])).toContain('quokka');
    const tool = attributesOf(spans.find((span) => span.name === 'execute_tool query_demo_records')!);
    expect(String(tool['gen_ai.tool.call.arguments'])).toContain('S007');
    expect(String(tool['gen_ai.tool.call.result'])).toContain('DEMO-HTN-01');
    const root = attributesOf(spans.find((span) => span.name.startsWith('invoke_agent'))!);
    expect(String(root['clinagent.run.input'])).toContain('wombat');

    const sent = bodiesOf(traceId);
    expect(sent).toContain('[identifier removed]');
    for (const secret of [PLANTED_IDENTIFIER, 'sk-test-secret-key']) expect(sent, secret).not.toContain(secret);
  });

  it('marks a failed tool call with error.type and error status, without the failure text that quotes the arguments', async () => {
    const server = await serverWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    model.push({ toolCalls: [{ name: 'query_demo_records', id: 'call_otel_2', arguments: { fields: ['wombat_field'] } }] });
    const traceId = await server.run();
    await server.close();
    await waitFor(rootArrived(traceId), 'the run span at the receiver', 10_000);

    // The bad call fails, the model's next one (scripted by run()) succeeds: 2 is STATUS_CODE_ERROR in OTLP, 0 unset.
    const calls = spansOf(traceId).filter((span) => span.name === 'execute_tool query_demo_records');
    expect(calls.map((span) => span.status?.code ?? 0).sort()).toEqual([0, 2]);
    const failed = calls.find((span) => span.status?.code === 2)!;
    expect(failed.status).toEqual({ code: 2 });
    expect(attributesOf(failed)).toMatchObject({ 'error.type': 'tool_call_failed', 'gen_ai.tool.name': 'query_demo_records' });
    expect(attributesOf(calls.find((span) => span !== failed)!)['error.type']).toBeUndefined();
    expect(bodiesOf(traceId)).not.toContain('wombat_field');
  });

  it('ties the turns of a conversation together with gen_ai.conversation.id, and marks a failed run', async () => {
    const server = await serverWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const conversationId = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    const turn = await server.ctx.trace.start({ kind: 'consult', name: 'dermatology_consult', input: { conversationId, message: 'wombat rash' } });
    await turn.finish({ status: 'failed', error: 'the wombat model refused' });
    await server.close();
    await waitFor(rootArrived(turn.traceId), 'the turn span at the receiver', 10_000);

    const [root] = spansOf(turn.traceId);
    expect(attributesOf(root!)).toMatchObject({ 'gen_ai.conversation.id': conversationId, 'gen_ai.agent.id': 'dermatology_consult', 'clinagent.trace.kind': 'consult', 'error.type': 'run_failed', 'clinagent.run.status': 'failed' });
    expect(root!.status).toEqual({ code: 2 });
    expect(bodiesOf(turn.traceId)).not.toContain('wombat');
  });

  it('finishes the run when the receiver is down, and says so once in the log at warn', async () => {
    const down = await startReceiver();
    await down.close();
    const lines: string[] = [];
    const server = await serverWith({ OTEL_EXPORTER_OTLP_ENDPOINT: down.url, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }, lines);
    await server.run();
    // Two batches fail (the flush between the runs, then shutdown's), and the log says so once.
    await server.ctx.telemetry!.flush();
    await server.run();
    // Shutdown tries the last batch and gives up within the timeout; it never throws.
    await server.close();
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string; receiver?: string }).filter((line) => line.msg.startsWith('OpenTelemetry: could not send spans'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, receiver: `${down.url}/v1/traces` });
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT builds no exporter and sends nothing', async () => {
    const before = receiver.requests.length;
    // Every other OTel variable set, and a receiver listening: without an endpoint nothing is wired to it.
    const server = await serverWith({ OTEL_SERVICE_NAME: 'clinagent-unset', OTEL_EXPORTER_OTLP_HEADERS: 'x-receiver-key=unused', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    expect(server.ctx.config.telemetry).toBeUndefined();
    expect(server.ctx.telemetry).toBeUndefined();
    const traceId = await server.run();
    expect((await server.ctx.trace.get(traceId, { all: true }))?.spans.map((span) => span.kind)).toEqual(expect.arrayContaining(['llm', 'tool']));
    await server.close();
    expect(receiver.requests.length).toBe(before);
  });
});
