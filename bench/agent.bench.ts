import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runAgent } from '../src/runtime/run-agent.js';
import { loadScenario } from '../src/runtime/scenarios/load.js';
import { createLlmGateway } from '../src/core/llm/gateway.js';
import { buildTestContext } from '../src/testing/test-context.js';
import { startScriptedModel } from '../src/testing/scripted-model.js';
import { printTable, summarise } from './stats.js';
import { printTargets } from './targets.js';

/**
 * runAgent overhead: the time our orchestration adds around the model. The model answers in zero time
 * through an in-process fetch (no network, no server), so what is measured is scenario handling,
 * retrieval, message building, the openai client, parsing and the trace writes.
 */
const ITERATIONS = Number(process.env.AGENT_BENCH_ITERATIONS ?? 300);

const reply = JSON.stringify({ answer: 'Age 18 to 75 [1].', citations: ['[1]'], confidence: 'high' });
const completion = JSON.stringify({
  id: 'x', object: 'chat.completion', created: 0, model: 'zero-latency',
  choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
});
const zeroLatencyFetch: typeof fetch = async () => new Response(completion, { status: 200, headers: { 'content-type': 'application/json' } });

export async function main(): Promise<void> {
  const ctx = await buildTestContext({ engine: 'pglite', env: { LLM_BASE_URL: 'http://zero-latency.invalid/v1', LLM_MODEL: 'zero-latency' } });
  const loopback = await startScriptedModel([], { fallback: { reply } });
  try {
    const llm = createLlmGateway({ ...ctx.config.llm, baseUrl: 'http://zero-latency.invalid/v1', model: 'zero-latency' }, { fetch: zeroLatencyFetch });
    const httpLlm = createLlmGateway({ ...ctx.config.llm, baseUrl: loopback.baseURL, model: 'scripted' });
    const qa = loadScenario(path.join(process.cwd(), 'scenarios', 'protocol-qa.yaml'));
    const plain = { ...qa, id: 'plain', rag: { ...qa.rag, enabled: false } };
    const { ingestScenarioDocuments } = await import('../src/runtime/scenarios/ingest-documents.js');
    await ingestScenarioDocuments(ctx.rag, qa);

    const rows = [];
    let baseline = NaN;
    let plainOverhead = NaN;
    for (const [label, scenario, gateway] of [
      ['bare model call (gateway only)', undefined, llm],
      ['runAgent, no RAG, zero-latency model', plain, llm],
      ['runAgent, RAG top-5, zero-latency model', qa, llm],
      ['runAgent, RAG top-5, loopback HTTP model', qa, httpLlm],
    ] as const) {
      const samples: number[] = [];
      for (let i = 0; i < ITERATIONS + 20; i++) {
        const t0 = performance.now();
        if (scenario) {
          const result = await runAgent(scenario, 'What is the age range in the inclusion criteria?', { context: { llm: gateway, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag } });
          if (result.status !== 'success') throw new Error(result.error);
        } else {
          await gateway.chat({ messages: [{ role: 'user', content: 'hi' }] });
        }
        if (i >= 20) samples.push(performance.now() - t0); // the first calls warm the JIT and caches
      }
      const s = summarise(samples);
      if (!scenario) baseline = s.p50;
      if (scenario === plain) plainOverhead = s.p50 - baseline;
      rows.push({ case: label, 'p50 ms': s.p50, 'p99 ms': s.p99, 'calls/s': 1000 / s.mean, 'p50 overhead vs bare call (ms)': scenario ? s.p50 - baseline : 0 });
    }
    printTable(`runAgent overhead per call (${ITERATIONS} calls each, PGlite trace store)`, rows);
    printTargets('runAgent against issue 22', [
      { figure: 'runAgent overhead per call, no RAG, zero-latency model', measuredMs: plainOverhead, targetMs: 1, referenceMs: baseline, reference: 'bare gateway call p50' },
    ]);
  } finally {
    await loopback.close();
    await ctx.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
