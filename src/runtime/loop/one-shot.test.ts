import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { completeOnce } from './one-shot.js';

describe('completeOnce: one traced model call', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  it('sends the messages once with the settings given, and records the call in the trace', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"facts": []}' });
    const trace = await ctx.trace.start({ kind: 'test', name: 'one-shot' });
    const response = await completeOnce({ llm: ctx.llm, trace, messages: [{ role: 'user', content: 'Distil this.' }], jsonMode: true, temperature: 0, maxTokens: 200 });
    await trace.finish({ status: 'success' });
    expect(response.content).toBe('{"facts": []}');
    expect(model.requests).toHaveLength(before + 1);
    expect(model.requests[before]!.body).toMatchObject({ messages: [{ role: 'user', content: 'Distil this.' }], temperature: 0, max_tokens: 200, response_format: { type: 'json_object' } });
    const stored = (await ctx.trace.get(trace.traceId, ALL_TRACES))!;
    expect(stored.spans.map((s) => s.kind)).toEqual(['llm']);
  });

  it('reads a stopped call as CANCELLED, as the loop does', async () => {
    const inFlight = model.gate();
    model.push({ reply: 'late' });
    const controller = new AbortController();
    const calling = completeOnce({ llm: ctx.llm, messages: [{ role: 'user', content: 'Summarise.' }], signal: controller.signal }).catch((e: unknown) => e);
    await inFlight.reached;
    controller.abort();
    const error = await calling;
    inFlight.release();
    expect(ClinAgentError.isInstance(error) && error.code).toBe('CANCELLED');
  });
});
