import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { roundLimit, runLoop } from '../src/runtime/loop/index.js';
import { createLlmGateway } from '../src/core/llm/gateway.js';
import { dataBlock } from '../src/core/llm/untrusted-data.js';
import { buildTestContext } from '../src/testing/test-context.js';
import { printTable, summarise } from './stats.js';
import { printTargets } from './targets.js';

/**
 * The agent loop's own cost per round: a model that answers in zero time through an in-process fetch, a tool
 * that returns at once, and the PGlite trace store recording every round (step span, llm span, tool span). The
 * figure is what the loop adds to each think -> act -> observe round, above a bare gateway call.
 */
const ITERATIONS = Number(process.env.LOOP_BENCH_ITERATIONS ?? 200);
const TOOL_ROUNDS = 4;

const completion = (content: string) =>
  JSON.stringify({
    id: 'x', object: 'chat.completion', created: 0, model: 'zero-latency',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
const USE_TOOL = completion('{"action": "use_tool", "tool": "bench_lookup", "arguments": {"id": "L7"}}');
const RESPOND = completion('{"action": "respond", "message": "done"}');

/** Uses the tool until it has seen TOOL_ROUNDS observations, then answers. */
const zeroLatencyFetch: typeof fetch = async (_url, init) => {
  const body = JSON.parse(String(init?.body ?? '{}')) as { messages?: Array<{ role: string }> };
  const observations = (body.messages ?? []).filter((m) => m.role === 'user').length - 1;
  return new Response(observations < TOOL_ROUNDS ? USE_TOOL : RESPOND, { status: 200, headers: { 'content-type': 'application/json' } });
};

interface LoopFigures {
  bare: number[];
  perRound: number[];
  loopCpuUs: number;
  flushMsPerRound: number;
}

/** ITERATIONS runs of the loop in a context built with `env` (the OpenTelemetry export on or off). */
async function measureLoop(env: Record<string, string>): Promise<LoopFigures> {
  const ctx = await buildTestContext({ engine: 'pglite', env: { LLM_BASE_URL: 'http://zero-latency.invalid/v1', LLM_MODEL: 'zero-latency', ...env } });
  try {
    const llm = createLlmGateway({ ...ctx.config.llm, baseUrl: 'http://zero-latency.invalid/v1', model: 'zero-latency' }, { fetch: zeroLatencyFetch });
    ctx.tools.register({ name: 'bench_lookup', description: 'returns at once', schema: z.object({ id: z.string() }), run: async ({ id }) => ({ id, ok: true }) });

    const bare: number[] = [];
    const perRound: number[] = [];
    // CPU time of the loop's rounds (the bare calls' CPU taken out): what load on a shared runner inflates least.
    let loopCpuUs = 0;
    for (let i = 0; i < ITERATIONS + 20; i++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await llm.chat({ messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'go' }] });
      const t1 = performance.now();
      const bareCpu = process.cpuUsage(cpu0);
      const cpu1 = process.cpuUsage();
      const trace = await ctx.trace.start({ kind: 'bench', name: 'loop' });
      const outcome = await runLoop({
        name: 'bench',
        llm,
        trace,
        messages: [{ role: 'system', content: 'Decide in JSON.' }, { role: 'user', content: 'go' }],
        decisions: { actions: ['use_tool', 'respond'], toolAction: 'use_tool' },
        tools: { registry: ctx.tools, allowed: ['bench_lookup'], offerWhen: () => true, whenWithheld: 'refuse' },
        stopWhen: [roundLimit(TOOL_ROUNDS + 2)],
        accept: (content) => ({ ok: true, value: content }),
        observations: { result: (o) => dataBlock('observation', o.result), failure: (_c, e) => e },
      });
      await trace.finish({ status: 'success' });
      if (outcome.kind !== 'final' || outcome.progress.rounds !== TOOL_ROUNDS + 1) throw new Error(`unexpected loop outcome ${outcome.kind}`);
      const t2 = performance.now();
      const loopCpu = process.cpuUsage(cpu1);
      if (i >= 20) {
        bare.push(t1 - t0);
        perRound.push((t2 - t1) / (TOOL_ROUNDS + 1));
        loopCpuUs += loopCpu.user + loopCpu.system - (TOOL_ROUNDS + 1) * (bareCpu.user + bareCpu.system);
      }
    }
    // Spans still queued belong to these runs: writing them is part of their cost, so it is counted once here.
    const flushStarted = performance.now();
    await ctx.trace.flush();
    const flushMsPerRound = (performance.now() - flushStarted) / (ITERATIONS * (TOOL_ROUNDS + 1));
    return { bare, perRound, loopCpuUs, flushMsPerRound };
  } finally {
    await ctx.close();
  }
}

/** An OTLP/HTTP receiver on loopback that answers at once and counts the spans it was sent (JSON, as the exporter sends). */
async function startReceiver(): Promise<{ url: string; spans(): number; close(): Promise<void> }> {
  let spans = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> };
      spans += body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).length;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans: () => spans, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export async function main(): Promise<void> {
  const off = await measureLoop({});
  const b = summarise(off.bare);
  const r = summarise(off.perRound);
  printTable(`Agent loop cost per round (${ITERATIONS} runs of ${TOOL_ROUNDS} tool rounds + 1 answer, zero-latency model, PGlite trace store)`, [
    { case: 'bare gateway call', 'p50 ms': b.p50, 'p99 ms': b.p99 },
    { case: 'one loop round (model call, decision parse, tool call, 3 spans)', 'p50 ms': r.p50, 'p99 ms': r.p99 },
    { case: 'loop overhead per round above the bare call', 'p50 ms': r.p50 - b.p50, 'p99 ms': r.p99 - b.p99 },
    { case: 'loop overhead per round, CPU time (mean)', 'p50 ms': off.loopCpuUs / 1000 / (ITERATIONS * (TOOL_ROUNDS + 1)), 'p99 ms': '' },
    { case: 'trace spans still queued at the end, written per round (mean)', 'p50 ms': off.flushMsPerRound, 'p99 ms': '' },
  ]);
  printTargets('Agent loop against issue 22', [
    { figure: 'loop overhead per round, traces on, zero-latency model', measuredMs: r.p50 - b.p50, targetMs: 0.5, referenceMs: b.p50, reference: 'bare gateway call p50' },
  ]);

  // The same loop with the OpenTelemetry export on (issue 34): spans batched to a receiver on loopback.
  const receiver = await startReceiver();
  try {
    const on = await measureLoop({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const ob = summarise(on.bare);
    const or = summarise(on.perRound);
    const offCpu = off.loopCpuUs / 1000 / (ITERATIONS * (TOOL_ROUNDS + 1));
    const onCpu = on.loopCpuUs / 1000 / (ITERATIONS * (TOOL_ROUNDS + 1));
    printTable(`Agent loop with the OpenTelemetry export on (OTLP/HTTP to a loopback receiver; ${receiver.spans()} spans received)`, [
      { case: 'loop overhead per round above the bare call, export off', 'p50 ms': r.p50 - b.p50, 'p99 ms': r.p99 - b.p99 },
      { case: 'loop overhead per round above the bare call, export on', 'p50 ms': or.p50 - ob.p50, 'p99 ms': or.p99 - ob.p99 },
      { case: 'loop CPU time per round (mean), export off / on', 'p50 ms': offCpu, 'p99 ms': onCpu },
      { case: 'ratio of the CPU time per round, on / off', 'p50 ms': onCpu / offCpu, 'p99 ms': '' },
    ]);
  } finally {
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
