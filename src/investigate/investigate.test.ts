import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClinAgentError } from '../core/errors.js';
import { dataBlock } from '../core/llm/untrusted-data.js';
import { createToolRegistry, type ToolRegistry } from '../core/tools/registry.js';
import { ALL_TRACES } from '../core/trace/store.js';
import type { AgentEvent } from '../runtime/loop/index.js';
import { startScriptedModel, type ScriptedModel, type ScriptedStep } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { ENDING_MESSAGES, investigate, type InvestigateInput } from './index.js';
import { MAX_ANSWER_TOKENS } from './definition.js';

type Sent = Array<{ role: string; content: string | null; tool_call_id?: string }>;

/** A tool round with usage figures: the scripted model's toolCalls steps always report 11/7, a raw body says what we want. */
function toolCallWithUsage(name: string, args: unknown, usage: { prompt_tokens: number; completion_tokens: number }): ScriptedStep {
  return {
    rawBody: JSON.stringify({
      id: 'chatcmpl-usage',
      object: 'chat.completion',
      created: 0,
      model: 'scripted-model',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    }),
  };
}

describe('investigate: the read-only ReAct engine', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let registry: ToolRegistry;
  const calls = { read_clinical_data: 0, update_record: 0 };

  const hotMemory = dataBlock('hot_memory', '## Preferences\n- 汇报只要结论');
  const profile = dataBlock('user_profile', 'detail: brief; role: PI');

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    // A fresh registry with tools named like the project's read tools, and a write tool the model must not run.
    registry = createToolRegistry();
    registry.register({
      name: 'read_clinical_data',
      description: 'Reads one record of the trial.',
      schema: z.object({ recordId: z.string().min(1) }),
      run: ({ recordId }) => {
        calls.read_clinical_data++;
        return { record_id: recordId, ecog: 1, enrolled: '2026-02-05' };
      },
    });
    registry.register({
      name: 'search_protocol',
      description: 'Searches the protocol.',
      schema: z.object({ query: z.string().min(1) }),
      run: () => ({ section: '5.2', text: 'ECOG 0-1 required at screening.' }),
    });
    registry.register({
      name: 'get_project_stats',
      description: 'Project statistics.',
      schema: z.object({}),
      run: () => {
        throw new Error('the statistics service is down');
      },
    });
    registry.register({
      name: 'update_record',
      description: 'Changes a field of a record.',
      schema: z.object({ recordId: z.string(), field: z.string(), value: z.unknown() }),
      run: () => {
        calls.update_record++;
        return { updated: true };
      },
    });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  async function ask(overrides: Partial<InvestigateInput> = {}) {
    const trace = await ctx.trace.start({ kind: 'test', name: 'investigate' });
    const result = await investigate({
      llm: ctx.llm,
      trace,
      registry,
      question: "What is P003's ECOG, and is it eligible?",
      language: 'en',
      context: { hotMemory, profile },
      limits: { maxIterations: 5, tokenBudget: 100_000 },
      agents: ctx.agents,
      ...overrides,
    });
    await trace.finish({ status: 'success' });
    return { result, trace: (await ctx.trace.get(trace.traceId, ALL_TRACES))! };
  }

  it('answers a data question through two tool calls, returning only the final answer; thoughts stay in the trace', async () => {
    const before = model.requests.length;
    const readsBefore = calls.read_clinical_data;
    model.push(
      { content: 'I need the record first.', toolCalls: [{ name: 'read_clinical_data', arguments: { recordId: 'P003' } }] },
      { content: 'Now the eligibility criterion.', toolCalls: [{ name: 'search_protocol', arguments: { query: 'ECOG' } }] },
      { reply: 'P003 has ECOG 1, within the 0-1 the protocol requires (protocol 5.2).' },
    );
    const { result, trace } = await ask();
    expect(result).toMatchObject({ ok: true, ending: 'answer', rounds: 3, answer: 'P003 has ECOG 1, within the 0-1 the protocol requires (protocol 5.2).' });
    expect(result.toolCalls.map((c) => [c.toolName, c.success])).toEqual([['read_clinical_data', true], ['search_protocol', true]]);
    expect(calls.read_clinical_data).toBe(readsBefore + 1);
    expect(model.requests).toHaveLength(before + 3);
    // Only the whitelisted tools this registry has are offered; the write tool is not.
    const offered = (model.requests[before]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(offered).toEqual(['read_clinical_data', 'search_protocol', 'get_project_stats']);
    // The record came back to the model as a declared data block.
    const second = model.requests[before + 1]!.body.messages as Sent;
    expect(second.at(-1)).toMatchObject({ role: 'tool', content: expect.stringMatching(/^<tool_result>\n[\s\S]*"ecog": 1[\s\S]*<\/tool_result>$/) });
    const steps = trace.spans.filter((s) => s.kind === 'step');
    expect(steps.map((s) => s.name)).toEqual(['investigate:round 1', 'investigate:round 2', 'investigate:round 3']);
    expect(steps[0]!.output).toMatchObject({
      outcome: 'tools',
      thought: 'I need the record first.',
      actions: [{ tool: 'read_clinical_data', arguments: '{"recordId":"P003"}' }],
      observations: [expect.stringContaining('"enrolled": "2026-02-05"')],
    });
    expect(steps[2]!.output).toMatchObject({ outcome: 'answer' });
    expect(result.answer).not.toContain('I need the record first');
  });

  it('refuses a registered write tool without running it, and tells the model it may only read', async () => {
    const before = model.requests.length;
    model.push(
      { toolCalls: [{ name: 'update_record', arguments: { recordId: 'P003', field: 'age', value: 45 } }] },
      { reply: 'I can only read trial data. To change the age, correct it in the EDC and re-import; then ask for QC on P003.' },
    );
    const { result } = await ask({ question: '把 P003 的年龄改成 45', language: 'zh' });
    expect(calls.update_record).toBe(0);
    expect(result).toMatchObject({ ok: true, ending: 'answer', rounds: 2 });
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'update_record', success: false, error: expect.stringContaining('is not allowed for trial questions (read-only)') })]);
    const refusal = (model.requests[before + 1]!.body.messages as Sent).at(-1)!;
    expect(refusal.role).toBe('tool');
    expect(refusal.content).toContain('Tool call refused: Tool "update_record" is not allowed');
    expect(refusal.content).toContain('You can only read trial data here');
    expect(refusal.content).toContain('guide them to the QC flow');
  });

  it('ends with the seed message when the reasoning has spent the token budget, before a third model call', async () => {
    const before = model.requests.length;
    // The first prompt (1000: system prompt, memory) is the context; the second grew by 4000 of observations.
    model.push(toolCallWithUsage('read_clinical_data', { recordId: 'P003' }, { prompt_tokens: 1000, completion_tokens: 20 }), toolCallWithUsage('search_protocol', { query: 'ECOG' }, { prompt_tokens: 5000, completion_tokens: 20 }));
    const { result } = await ask({ language: 'zh', question: 'P003 的 ECOG 是多少?', limits: { maxIterations: 5, tokenBudget: 4000 } });
    expect(model.requests).toHaveLength(before + 2);
    expect(result).toMatchObject({ ok: false, ending: 'token_budget', rounds: 2, promptTokens: 6000, completionTokens: 40, answer: '抱歉,这个问题比较复杂,请尝试更具体的描述。' });
  });

  it('trips the error breaker after two failed tool calls in a row, with no further model call', async () => {
    const before = model.requests.length;
    model.push({ toolCalls: [{ name: 'read_clinical_data', arguments: {} }] }, { toolCalls: [{ name: 'get_project_stats', arguments: {} }] }); // no third step: a third model call would get a 500 and fail the test
    const { result } = await ask();
    expect(model.requests).toHaveLength(before + 2);
    expect(result).toMatchObject({ ok: false, ending: 'error_breaker', rounds: 2, answer: ENDING_MESSAGES.error_breaker.en });
    expect(result.toolCalls.map((c) => c.error)).toEqual([expect.stringContaining('recordId'), 'get_project_stats failed: the statistics service is down']);
    // The bad arguments went back as text the model could fix.
    const fix = (model.requests[before + 1]!.body.messages as Sent).at(-1)!.content;
    expect(fix).toMatch(/^Tool call failed: Invalid arguments for read_clinical_data:\nrecordId: /);
    expect(fix).toContain('Fix the arguments of read_clinical_data');
  });

  it('ends with the seed message after maxIterations model calls when the model keeps calling tools', async () => {
    const before = model.requests.length;
    const call: ScriptedStep = { toolCalls: [{ name: 'read_clinical_data', arguments: { recordId: 'P003' } }] };
    model.push(call, call, call, call, call);
    const { result } = await ask({ language: 'zh' });
    expect(model.requests).toHaveLength(before + 5);
    expect(result).toMatchObject({ ok: false, ending: 'max_rounds', rounds: 5, answer: '抱歉,我无法在有限步骤内完成这个查询。请尝试更具体的问题。' });
    expect(result.toolCalls).toHaveLength(5);
  });

  it('assembles system prompt, hot memory, profile, history only when given, earlier turns, then the question', async () => {
    const before = model.requests.length;
    const history = dataBlock('history', '[W12] Added a transport allowance to speed up enrolment.');
    const earlier = [
      { role: 'user' as const, content: 'How many subjects are enrolled?' },
      { role: 'assistant' as const, content: '42 subjects.' },
    ];
    model.push({ reply: 'In week 12 we added a transport allowance.' }, { reply: 'P003 has ECOG 1.' });
    await ask({ question: 'Why did we add a transport allowance?', context: { hotMemory, profile, history, earlier } });
    await ask({ context: { hotMemory, profile, earlier } });

    const withHistory = model.requests[before]!.body.messages as Sent;
    expect(withHistory.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(withHistory.slice(1)).toEqual([...earlier, { role: 'user', content: 'Why did we add a transport allowance?' }]);
    const system = withHistory[0]!.content!;
    expect(system).toContain('Answer in English');
    expect(system.indexOf('You can only read.')).toBeGreaterThan(0);
    expect(system.indexOf(hotMemory)).toBeGreaterThan(system.indexOf('Text inside a tagged data block'));
    expect(system.indexOf(profile)).toBeGreaterThan(system.indexOf(hotMemory));
    expect(system.indexOf(history)).toBeGreaterThan(system.indexOf(profile));

    const withoutHistory = (model.requests[before + 1]!.body.messages as Sent)[0]!.content!;
    expect(withoutHistory).toContain(hotMemory);
    expect(withoutHistory).toContain(profile);
    expect(withoutHistory).not.toContain('transport allowance');
    expect(withoutHistory).not.toMatch(/^<history>$/m);
  });

  it('streams only the final answer: text of a tool round never reaches onEvent, tool events do', async () => {
    const events: AgentEvent[] = [];
    model.push(
      { content: 'Let me look up P003 first.', toolCalls: [{ name: 'read_clinical_data', arguments: { recordId: 'P003' } }] },
      { reply: 'P003 has ECOG 1 (record P003).', stream: { pieceChars: 5 } },
    );
    const { result } = await ask({ onEvent: (event) => events.push(event) });
    expect(result.answer).toBe('P003 has ECOG 1 (record P003).');
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas.map((e) => e.text).join('')).toBe('P003 has ECOG 1 (record P003).');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((e) => e.round === 2)).toBe(true);
    // A round is finished (and its tool calls known) before its tools run; the answer's text comes just before its round_finished.
    expect(events.map((e) => e.type)).toEqual(['round_finished', 'tool_call_started', 'tool_call_finished', ...deltas.map(() => 'text_delta'), 'round_finished']);
    expect(events.find((e) => e.type === 'tool_call_started')).toMatchObject({ name: 'read_clinical_data', round: 1 });
  });

  it('streams no text of an answer that is asked again: cut off by the token limit, or too long', async () => {
    for (const unusable of [{ reply: 'P003 has ECOG 1 and is eli', finishReason: 'length', stream: { pieceChars: 5 } }, { reply: 'P003 ECOG 1. '.repeat(1000), stream: { pieceChars: 500 } }]) {
      const events: AgentEvent[] = [];
      model.push(unusable, { reply: 'P003 has ECOG 1 and is eligible.', stream: { pieceChars: 5 } });
      const { result } = await ask({ onEvent: (event) => events.push(event) });
      expect(result.answer).toBe('P003 has ECOG 1 and is eligible.');
      expect(events.filter((e) => e.type === 'text_delta').map((e) => e.text).join('')).toBe('P003 has ECOG 1 and is eligible.');
      expect(events.filter((e) => e.type === 'round_finished').map((e) => e.type === 'round_finished' && e.truncated === true)).toEqual(['finishReason' in unusable, false]);
    }
  });

  it('bounds the answer: max_tokens on every call, and a 200 kB answer is asked again shorter, never returned', async () => {
    const before = model.requests.length;
    const huge = 'P003 ECOG 1. '.repeat(16_000);
    model.push({ reply: huge }, { reply: 'P003 has ECOG 1 and is eligible.' });
    const { result, trace } = await ask();
    // The trace keeps the start of the huge answer and its length, not 200 kB per round.
    expect(JSON.stringify(trace).length).toBeLessThan(60_000);
    expect(JSON.stringify(trace)).toContain(`(${huge.length} characters in all, cut here)`);
    expect(result).toMatchObject({ ok: true, ending: 'answer', answer: 'P003 has ECOG 1 and is eligible.' });
    expect(model.requests.slice(before).map((r) => r.body.max_tokens)).toEqual([MAX_ANSWER_TOKENS, MAX_ANSWER_TOKENS]);
    const second = model.requests.at(-1)!.body.messages as Array<{ content: string }>;
    expect(second.at(-1)!.content).toMatch(/too long to use.*at most 8000 characters/);
    // Nor is the huge answer sent back whole.
    expect(JSON.stringify(second).length).toBeLessThan(40_000);

    // Too long twice, or cut off by the token limit twice: the seed's message, not the text.
    model.push({ reply: huge }, { reply: huge });
    const { result: tooLong } = await ask();
    expect(tooLong).toMatchObject({ ok: false, ending: 'error_breaker' });
    expect(tooLong.answer.length).toBeLessThan(200);
    model.push({ reply: 'P003 has ECOG 1 and', finishReason: 'length' }, { reply: 'P003 has', finishReason: 'length' });
    const { result: cut } = await ask();
    expect(cut).toMatchObject({ ok: false, ending: 'token_budget', answer: ENDING_MESSAGES.token_budget.en });
  });

  it('refuses an empty question and bad limits before any model call', async () => {
    const before = model.requests.length;
    const error = await ask({ question: '  ', limits: { maxIterations: 0, tokenBudget: 4000 } }).catch((e: unknown) => e);
    expect(ClinAgentError.isInstance(error) && error.code).toBe('VALIDATION_FAILED');
    expect((error as ClinAgentError).message).toContain('question: empty');
    expect((error as ClinAgentError).message).toContain('limits.maxIterations');
    expect(model.requests).toHaveLength(before);
  });
});
