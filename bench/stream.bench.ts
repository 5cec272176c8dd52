import { pathToFileURL } from 'node:url';
import { createLlmGateway } from '../src/core/llm/gateway.js';
import { buildServer } from '../src/http/server.js';
import { readEventStream } from '../src/testing/read-event-stream.js';
import { startScriptedModel } from '../src/testing/scripted-model.js';
import { buildTestContext } from '../src/testing/test-context.js';
import { printTable, summarise } from './stats.js';
import { printTargets } from './targets.js';

/**
 * Streaming time to first token over loopback: how soon the first piece of text reaches the caller, against
 * how long the whole answer takes. The scripted model answers at once (no per-chunk delay), so what is measured
 * is our path: the openai client's SSE parsing, the thinking filter, the agent loop and the SSE route.
 */
const ITERATIONS = Number(process.env.STREAM_BENCH_ITERATIONS ?? 200);
const WARMUP = 20;

// About 600 characters in 4-character pieces: some 150 chunks, a typical short answer.
const reply = JSON.stringify({ summary: 'Visit 2 is 80% complete; two subjects lack a consent date and one a weight. '.repeat(8), completion_rate: 0.8, issues: [], action_items: [] });

type Sample = { firstMs: number; totalMs: number };

async function measure(run: () => Promise<Sample>): Promise<{ first: number[]; total: number[] }> {
  const first: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < ITERATIONS + WARMUP; i++) {
    const sample = await run();
    if (i < WARMUP) continue; // the first calls warm the JIT, the connection pool and the tokenizer
    first.push(sample.firstMs);
    total.push(sample.totalMs);
  }
  return { first, total };
}

export async function main(): Promise<void> {
  const model = await startScriptedModel([], { fallback: { reply } });
  const ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
  const app = await buildServer(ctx, { serveConsole: false });
  try {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await ctx.users.create({ name: 'bench', role: 'coordinator' });
    const gateway = createLlmGateway({ ...ctx.config.llm, baseUrl: model.baseURL, model: 'scripted' });
    const messages = [{ role: 'user' as const, content: 'How complete is visit 2?' }];
    const body = JSON.stringify({ scenarioId: 'data-completeness', input: 'How complete is visit 2?' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };

    const cases: Array<[string, () => Promise<Sample>]> = [
      ['gateway, plain call', async () => {
        const t0 = performance.now();
        await gateway.chat({ messages });
        const totalMs = performance.now() - t0;
        return { firstMs: totalMs, totalMs };
      }],
      ['gateway, streamed', async () => {
        const t0 = performance.now();
        let firstMs = NaN;
        await gateway.chat({ messages, onDelta: () => { if (Number.isNaN(firstMs)) firstMs = performance.now() - t0; } });
        return { firstMs, totalMs: performance.now() - t0 };
      }],
      ['POST /api/agent/run (JSON)', async () => {
        const t0 = performance.now();
        const response = await fetch(`${url}/api/agent/run`, { method: 'POST', headers, body });
        if ((await response.json() as { status: string }).status !== 'success') throw new Error('run failed');
        const totalMs = performance.now() - t0;
        return { firstMs: totalMs, totalMs };
      }],
      ['POST /api/agent/run/stream (SSE)', async () => {
        const t0 = performance.now();
        let firstMs = NaN;
        for await (const event of readEventStream(await fetch(`${url}/api/agent/run/stream`, { method: 'POST', headers, body }))) {
          if (event.event === 'text_delta' && Number.isNaN(firstMs)) firstMs = event.receivedAt - t0;
          if (event.event === 'result' && event.data.status !== 'success') throw new Error(event.data.error);
        }
        return { firstMs, totalMs: performance.now() - t0 };
      }],
    ];

    const rows = [];
    const firstP50 = new Map<string, number>();
    for (const [label, run] of cases) {
      const { first, total } = await measure(run);
      const f = summarise(first);
      firstP50.set(label, f.p50);
      const t = summarise(total);
      rows.push({ case: label, 'first text p50 ms': f.p50, 'first text p99 ms': f.p99, 'whole answer p50 ms': t.p50, 'whole answer p99 ms': t.p99 });
    }
    printTable(`Streaming time to first token over loopback (${ITERATIONS} runs each, ${reply.length}-character answer in 4-character chunks; for plain calls the first text is the whole answer)`, rows);
    const gatewayFirst = firstP50.get('gateway, streamed')!;
    printTargets('Streaming against issue 22', [
      { figure: 'first text over POST /api/agent/run/stream, above the gateway\'s first token', measuredMs: firstP50.get('POST /api/agent/run/stream (SSE)')! - gatewayFirst, targetMs: 2, referenceMs: gatewayFirst, reference: 'gateway first token p50' },
    ]);
  } finally {
    await app.close();
    await ctx.close();
    await model.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
