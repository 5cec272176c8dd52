import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClinAgentError } from '../../core/errors.js';
import { dataBlock } from '../../core/llm/untrusted-data.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { loadScenario } from '../scenarios/load.js';
import { runAgent } from '../run-agent.js';
import path from 'node:path';
import { SOFT_RULE_DEFINITION } from '../../trial/soft/definition.js';
import { textAnswer } from '../definitions/index.js';
import { attemptLimit, errorBreaker, roundLimit, runDefinition, runLoop, tokenBudget, type LoopConfig } from './index.js';

/**
 * A test agent on the one loop, configured the way the consultation agent (seed 003) will be: JSON decisions
 * (use_tool / respond / diagnose) instead of native function calling, a tool allow-list, the seed's limits.
 */
describe('the one agent loop', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let lookups = 0;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    ctx.tools.register({
      name: 'lookup_lesion_history',
      description: 'Earlier photos and notes of a skin lesion.',
      schema: z.object({ lesionId: z.string().min(1) }),
      run: async ({ lesionId }) => {
        lookups++;
        return { lesionId, notes: ['2025-01: 4 mm, even border', '2025-06: 6 mm, irregular border'] };
      },
    });
    ctx.tools.register({ name: 'order_biopsy', description: 'Orders a biopsy (a write action).', schema: z.object({}), run: async () => ({ ordered: true }) });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  async function consult(overrides: Partial<LoopConfig<Record<string, unknown>>> = {}) {
    const trace = await ctx.trace.start({ kind: 'test', name: 'consult' });
    const outcome = await runLoop<Record<string, unknown>>({
      name: 'consult',
      llm: ctx.llm,
      trace,
      messages: [
        { role: 'system', content: 'You are a dermatology consultant. Answer with one JSON decision: {"action": "use_tool"|"respond"|"diagnose", ...}.' },
        { role: 'user', content: 'Lesion L7 has grown. What now?' },
      ],
      decisions: { actions: ['use_tool', 'respond', 'diagnose'], toolAction: 'use_tool' },
      tools: { registry: ctx.tools, allowed: ['lookup_lesion_history'], offerWhen: () => true, whenWithheld: 'refuse' },
      stopWhen: [roundLimit(5), tokenBudget(4000), errorBreaker(2)],
      // JSON mode hands accept the decision the shared parser read: no second parse of the text here.
      accept: ({ decision }) => {
        const data = decision!.data;
        return data.action === 'diagnose' && typeof data.diagnosis !== 'string' ? { ok: false, problems: ['diagnosis: required with action "diagnose"'] } : { ok: true, value: data };
      },
      correction: (problems) => ({ role: 'user', content: `Fix your decision:\n${problems.join('\n')}` }),
      observations: { result: (o) => dataBlock('observation', o.result), failure: (call, error) => `Tool ${call.name} failed: ${error}` },
      ...overrides,
    });
    await trace.finish({ status: 'success' });
    return { outcome, trace: (await ctx.trace.get(trace.traceId, ALL_TRACES))! };
  }

  it('acts on a JSON decision, observes the result as data, and ends on a final decision', async () => {
    const before = model.requests.length;
    model.push(
      { reply: 'Let me look first. {"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}, "thought": "need history"}' },
      { reply: '{"action": "diagnose", "diagnosis": "atypical naevus, refer for dermoscopy", "confidence": 0.7}' },
    );
    const { outcome, trace } = await consult();
    expect(outcome.kind).toBe('final');
    expect(outcome.kind === 'final' && outcome.value).toMatchObject({ action: 'diagnose', diagnosis: 'atypical naevus, refer for dermoscopy' });
    expect(lookups).toBe(1);
    // The observation went back to the model inside a declared data block, after the model's own decision.
    const second = model.requests[before + 1]!.body.messages as Array<{ role: string; content: string }>;
    expect(second.at(-2)).toMatchObject({ role: 'assistant' });
    expect(second.at(-1)!.content).toMatch(/^<observation>\n[\s\S]*irregular border[\s\S]*<\/observation>$/);
    // Every round is in the trace: the thought and action of the first, the answer of the second.
    const steps = trace.spans.filter((s) => s.kind === 'step');
    expect(steps.map((s) => s.name)).toEqual(['consult:round 1', 'consult:round 2']);
    expect(steps[0]!.output).toMatchObject({ outcome: 'tools', observations: [expect.stringContaining('irregular border')] });
    expect(steps[1]!.output).toMatchObject({ outcome: 'answer', thought: expect.stringContaining('atypical naevus') });
  });

  it('refuses a registered tool outside the allow-list without running it, and tells the model', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"action": "use_tool", "tool": "order_biopsy", "arguments": {}}' }, { reply: '{"action": "respond", "message": "I cannot order it; please ask the clinician."}' });
    const { outcome } = await consult();
    expect(outcome.kind).toBe('final');
    expect(outcome.toolCalls).toEqual([expect.objectContaining({ toolName: 'order_biopsy', success: false, error: expect.stringContaining('is not allowed here. Allowed tools: lookup_lesion_history') })]);
    const refusal = (model.requests[before + 1]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    expect(refusal).toContain('Tool order_biopsy failed: Tool "order_biopsy" is not allowed here');
  });

  it('stops at the error breaker after two failed tool calls in a row', async () => {
    model.push({ reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {}}' }, { reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": ""}}' });
    const { outcome } = await consult();
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'error_breaker', progress: { rounds: 2, failedToolCallsInARow: 2 } });
    expect(outcome.kind === 'stopped' && outcome.lastFailure).toMatchObject({ kind: 'tool', error: expect.stringContaining('lesionId') });
  });

  it("never gives an earlier turn's answer as a stopped turn's last content", async () => {
    // A continued conversation: the history holds the previous turn's answer; this turn's model only calls tools.
    const messages = [
      { role: 'system' as const, content: 'You are a dermatology consultant.' },
      { role: 'user' as const, content: 'Lesion L7 has grown.' },
      { role: 'assistant' as const, content: 'Last week: it looks benign, no need to worry.' },
      { role: 'user' as const, content: 'It grew again. What now?' },
    ];
    model.push({ toolCalls: [{ name: 'lookup_lesion_history', arguments: {} }] }, { toolCalls: [{ name: 'lookup_lesion_history', arguments: { lesionId: '' } }] });
    const { outcome } = await consult({ messages, decisions: undefined });
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'error_breaker' });
    expect(outcome.kind === 'stopped' && outcome.lastContent).toBe('');
  });

  it('stops when the token budget is spent, counting what the endpoint reports', async () => {
    model.push({ reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}}', usage: { prompt_tokens: 3500, completion_tokens: 600 } });
    const { outcome } = await consult();
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'token_budget', progress: { rounds: 1, promptTokens: 3500, completionTokens: 600 } });
  });

  it('sends an answer the validate hook rejects back with its problems, then accepts the corrected one', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"action": "diagnose"}' }, { reply: '{"action": "diagnose", "diagnosis": "seborrhoeic keratosis"}' });
    const { outcome } = await consult();
    expect(outcome).toMatchObject({ kind: 'final', value: { diagnosis: 'seborrhoeic keratosis' }, progress: { corrections: 1 } });
    expect((model.requests[before + 1]!.body.messages as Array<{ content: string }>).at(-1)!.content).toBe('Fix your decision:\ndiagnosis: required with action "diagnose"');
  });

  it('asks again when a decision is not JSON with a known action', async () => {
    model.push({ reply: 'I think it is fine.' }, { reply: '{"action": "shrug"}' }, { reply: '{"action": "respond", "message": "Fine."}' });
    const { outcome } = await consult();
    expect(outcome).toMatchObject({ kind: 'final', value: { action: 'respond' }, progress: { corrections: 2 } });
  });

  it('hands accept the decision read from prose around the JSON, with its action', async () => {
    model.push({ reply: 'My view: {"action": "diagnose", "diagnosis": "benign naevus", "confidence": 0.8,}' });
    const seen: unknown[] = [];
    const { outcome } = await consult({
      accept: (answer) => {
        seen.push(answer);
        return { ok: true, value: answer.decision!.data };
      },
    });
    expect(seen).toEqual([{ content: 'My view: {"action": "diagnose", "diagnosis": "benign naevus", "confidence": 0.8,}', decision: { action: 'diagnose', data: { action: 'diagnose', diagnosis: 'benign naevus', confidence: 0.8 } } }]);
    expect(outcome).toMatchObject({ kind: 'final', value: { diagnosis: 'benign naevus' } });
  });

  it('ends the turn waiting for an answer on a waitOn action, with the decision and without calling accept', async () => {
    const before = model.requests.length;
    model.push(
      { reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}}' },
      { reply: '{"action": "ask", "question": "Has the lesion bled or itched?"}' },
    );
    let accepted = 0;
    const { outcome, trace } = await consult({
      decisions: { actions: ['use_tool', 'respond', 'diagnose', 'ask', 'propose_biopsy'], toolAction: 'use_tool', waitOn: { ask: 'answer', propose_biopsy: 'approval' } },
      accept: () => {
        accepted++;
        return { ok: true, value: {} };
      },
    });
    expect(model.requests).toHaveLength(before + 2);
    expect(accepted).toBe(0);
    expect(outcome).toMatchObject({
      kind: 'waiting',
      awaiting: 'answer',
      action: 'ask',
      decision: { action: 'ask', question: 'Has the lesion bled or itched?' },
      content: '{"action": "ask", "question": "Has the lesion bled or itched?"}',
      progress: { rounds: 2, toolRounds: 1 },
    });
    // The messages end with the question, so a resumed run appends the person's answer and goes on.
    expect(outcome.messages.at(-1)).toEqual({ role: 'assistant', content: '{"action": "ask", "question": "Has the lesion bled or itched?"}' });
    expect(outcome.toolCalls.map((c) => c.toolName)).toEqual(['lookup_lesion_history']);
    expect(trace.spans.filter((s) => s.kind === 'step').at(-1)).toMatchObject({ status: 'success', output: { outcome: 'waiting', awaiting: 'answer', action: 'ask' } });
  });

  it('ends the turn waiting for an approval on an approval action', async () => {
    model.push({ reply: '{"action": "propose_biopsy", "reason": "irregular border"}' });
    const { outcome } = await consult({ decisions: { actions: ['use_tool', 'respond', 'propose_biopsy'], toolAction: 'use_tool', waitOn: { propose_biopsy: 'approval' } } });
    expect(outcome).toMatchObject({ kind: 'waiting', awaiting: 'approval', action: 'propose_biopsy', decision: { reason: 'irregular border' } });
  });

  it('counts a failed model call as a failed attempt when modelErrors is attempt, and throws it otherwise', async () => {
    model.push({ status: 400, body: { error: { message: 'bad request' } } }, { reply: '{"action": "respond", "message": "ok"}' });
    const { outcome } = await consult({ modelErrors: 'attempt', stopWhen: [attemptLimit(2)] });
    expect(outcome).toMatchObject({ kind: 'final', progress: { rounds: 2, failedModelCalls: 1 } });

    model.push({ status: 400, body: { error: { message: 'bad request' } } }, { status: 400, body: { error: { message: 'bad request' } } });
    const { outcome: stopped } = await consult({ modelErrors: 'attempt', stopWhen: [attemptLimit(2)] });
    expect(stopped).toMatchObject({ kind: 'stopped', reason: 'retries_exhausted', lastFailure: { kind: 'model', error: expect.any(String) } });

    model.push({ status: 400, body: { error: { message: 'bad request' } } });
    const thrown = await consult().catch((error: unknown) => error);
    expect(ClinAgentError.isInstance(thrown)).toBe(true);
  });

  it('never takes an answer cut off by the token limit: it asks again, counts an attempt, and the stop says truncated', async () => {
    const before = model.requests.length;
    // Valid JSON with a complete action, but finish_reason "length": the text is a prefix of what the model meant.
    model.push({ reply: '{"action": "respond", "message": "Che"}', finishReason: 'length' }, { reply: '{"action": "respond", "message": "Chest X-ray first."}' });
    const { outcome, trace } = await consult({ stopWhen: [attemptLimit(3)] });
    expect(outcome).toMatchObject({ kind: 'final', value: { message: 'Chest X-ray first.' }, progress: { corrections: 1, truncatedAnswers: 1 } });
    expect((model.requests[before + 1]!.body.messages as Array<{ content: string }>).at(-1)!.content).toMatch(/cut off at the output token limit/);
    expect(trace.spans.filter((s) => s.kind === 'step')[0]).toMatchObject({ status: 'failed', output: { outcome: 'truncated' } });

    // Streamed the same way, and cut off twice: stopped, never final, and the stop says why.
    model.push({ reply: '{"action": "respond", "message": "Half an ans', finishReason: 'length' }, { reply: 'Half an ans', finishReason: 'length' });
    const { outcome: stopped } = await consult({ stopWhen: [attemptLimit(2)], onEvent: () => undefined });
    expect(stopped).toMatchObject({ kind: 'stopped', reason: 'truncated', lastFailure: { kind: 'answer', truncated: true }, progress: { corrections: 2, truncatedAnswers: 2 } });
  });

  it('refuses JSON that only repair could close, even when the endpoint says it stopped normally', async () => {
    model.push({ reply: '{"action": "respond", "message": "Che' }, { reply: '{"action": "respond", "message": "Chest X-ray first."}' });
    const { outcome } = await consult({ stopWhen: [attemptLimit(3)] });
    expect(outcome).toMatchObject({ kind: 'final', value: { message: 'Chest X-ray first.' }, progress: { corrections: 1, truncatedAnswers: 1 } });
  });

  it('bounds a turn whose definition sets no limits: unusable answers stop after three, cut-off answers after two', async () => {
    const definition = { ...SOFT_RULE_DEFINITION, id: 'unbounded', stop: {}, tools: [] };
    model.push({ reply: 'not json' }, { reply: 'still not json' }, { reply: 'nope' });
    const trace = await ctx.trace.start({ kind: 'test', name: 'unbounded' });
    const unusable = await runDefinition({ ...definition, answer: textAnswer(z.string().refine(() => false, 'not an answer')) }, { llm: ctx.llm, trace, input: { instruction: 'x', context: {}, tools: [] } });
    expect(unusable).toMatchObject({ kind: 'stopped', reason: 'retries_exhausted', progress: { rounds: 3 } });
    model.push({ reply: 'Half', finishReason: 'length' }, { reply: 'Half an', finishReason: 'length' });
    const cut = await runDefinition({ ...definition, answer: textAnswer(z.string()) }, { llm: ctx.llm, trace, input: { instruction: 'x', context: {}, tools: [] } });
    expect(cut).toMatchObject({ kind: 'stopped', reason: 'truncated', progress: { rounds: 2 } });
    await trace.finish({ status: 'success' });
  });

  it('stops at the round limit when the model keeps using tools', async () => {
    const call = { reply: '{"action": "use_tool", "tool": "lookup_lesion_history", "arguments": {"lesionId": "L7"}}' };
    model.push(call, call, call);
    const { outcome } = await consult({ stopWhen: [roundLimit(3)] });
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'max_rounds', progress: { rounds: 3, toolRounds: 3 } });
  });

  it('is cancelled by its signal mid-call, and runAgent marks the trace cancelled', async () => {
    const loopCall = model.gate();
    model.push({ reply: '{"action": "respond", "message": "late"}' });
    const controller = new AbortController();
    const consulting = consult({ signal: controller.signal }).catch((error: unknown) => error);
    await loopCall.reached;
    controller.abort();
    const cancelled = await consulting;
    loopCall.release();
    expect(ClinAgentError.isInstance(cancelled) && cancelled.code).toBe('CANCELLED');

    const agentCall = model.gate();
    model.push({ reply: 'a slow answer' });
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const stop = new AbortController();
    const running = runAgent(scenario, 'How complete are the records?', { context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace }, signal: stop.signal });
    await agentCall.reached;
    stop.abort();
    const result = await running;
    agentCall.release();
    expect(result.status).toBe('cancelled');
    expect((await ctx.trace.get(result.traceId, ALL_TRACES))!.status).toBe('cancelled');
  });
});
