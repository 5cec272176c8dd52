import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { correctionMessage } from '../../runtime/loop/index.js';
import { SOFT_RULE_DEFINITION } from './definition.js';
import { isNeedsHumanReview, runWithRetry, type SoftRuleDeps } from './run-with-retry.js';
import { checkVerdict } from './verdict.js';

type TestContext = Awaited<ReturnType<typeof buildTestContext>>;

const INSTRUCTION = 'Check that the adverse event is consistent with the medical history.';
const RECORD = { subject_id: 'S001', site: 'SITE-01', 既往史: '高血压 10 年,规律服用氨氯地平', 不良事件: '头晕(轻度)', 血压: '150/95 mmHg' };
const GOOD = '{"passed": true, "reason": "Dizziness fits known hypertension.", "confidence": 0.9, "evidence": "既往史: 高血压"}';

describe('runWithRetry against the scripted model', () => {
  let model: ScriptedModel;
  let ctx: TestContext;
  let deps: SoftRuleDeps;
  let invocations = 0;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    deps = { llm: ctx.llm, tools: ctx.tools, agents: ctx.agents };
    // A real registry tool that counts its runs, to prove a refused call never reaches it.
    ctx.tools.register({ name: 'count_invocations', description: 'Counts its own runs.', schema: z.object({}), run: () => ++invocations });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  /** Runs `fn` and returns the requests the model server received meanwhile. */
  async function requestsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
    const before = model.requests.length;
    const result = await fn();
    return { result, requests: model.requests.slice(before) };
  }

  const messagesOf = (request: RecordedRequest) => request.body.messages as Array<{ role: string; content: string | null; tool_call_id?: string }>;

  it('returns the verdict of a clean JSON answer after one model call, offering no tools by default', async () => {
    model.push({ reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(result).toMatchObject({ passed: true, confidence: 0.9, evidence: '既往史: 高血压', attempts: 1, parsedAs: 'exact', toolCalls: [] });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.tools).toBeUndefined();
    const [system] = messagesOf(requests[0]!);
    expect(system!.role).toBe('system');
    expect(system!.content).toContain(INSTRUCTION);
    expect(system!.content).toContain('may be in Chinese');
    expect(system!.content).toContain('"passed"');
  });

  it('never judges from a verdict cut off by the token limit: asks again, and gives up to a person when it stays cut off', async () => {
    // "passed": true parses, but the reason was cut off: finish_reason "length" makes it no verdict.
    model.push({ reply: '{"passed": true, "reason": "Consist", "confidence": 0.9, "evidence": ""}', finishReason: 'length' }, { reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(result).toMatchObject({ passed: true, reason: 'Dizziness fits known hypertension.', attempts: 2 });
    expect(messagesOf(requests[1]!).at(-1)!.content).toMatch(/cut off at the output token limit/);

    // JSON that only repair could close, then finish_reason "length": needs human review, saying the answer was cut off.
    model.push({ reply: '{"passed": false, "reason": "Blood pressure 150/95 is' }, { reply: '{"passed": false, "reason": "Blood', finishReason: 'length' });
    const cut = await runWithRetry(deps, INSTRUCTION, RECORD, { maxRetries: 3 });
    expect(isNeedsHumanReview(cut)).toBe(true);
    expect(cut).toMatchObject({ passed: false, confidence: 0, attempts: 2 });
    expect(cut.reason).toMatch(/no usable verdict after 2 attempts \(last: answer cut off: /);
  });

  it('asks again for a verdict whose reason is too long to become a query, and judges from the short one', async () => {
    model.push({ reply: JSON.stringify({ passed: false, reason: 'The record looks odd. '.repeat(10_000), confidence: 0.9, evidence: '' }) }, { reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(result).toMatchObject({ passed: true, reason: 'Dizziness fits known hypertension.', attempts: 2 });
    expect(messagesOf(requests[1]!).at(-1)!.content).toMatch(/reason: must NOT have more than 2000 characters/);
  });

  it('repairs JSON in a markdown fence with a trailing comma without asking again, and clamps confidence', async () => {
    model.push({ reply: 'Verdict:\n```json\n{"passed": false, "reason": "BP too high", "confidence": 1.4, "evidence": "150/95",}\n```' });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(result).toMatchObject({ passed: false, reason: 'BP too high', confidence: 1, parsedAs: 'repaired', attempts: 1 });
    expect(isNeedsHumanReview(result)).toBe(false);
    expect(requests).toHaveLength(1);
  });

  it('feeds a failed tool call back as a tool message so the model corrects its arguments, and traces every step', async () => {
    model.push(
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 3, denominator: 0 }, id: 'call_bad' }] },
      { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 3, denominator: 4 }, id: 'call_good' }] },
      { reply: '{"passed": true, "reason": "75% of visits done", "confidence": 0.8, "evidence": "rate 0.75"}' },
    );
    const trace = await ctx.trace.start({ kind: 'test', name: 'soft-rule' });
    const { result, requests } = await requestsDuring(() => runWithRetry({ ...deps, trace }, INSTRUCTION, RECORD, { tools: ['calculate_rate'] }));
    await trace.finish({ status: 'success' });

    expect(requests).toHaveLength(3);
    expect(requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['calculate_rate']);
    const feedback = messagesOf(requests[1]!).find((m) => m.role === 'tool');
    expect(feedback).toMatchObject({ tool_call_id: 'call_bad' });
    expect(feedback!.content).toContain('denominator: must be greater than 0');
    expect(feedback!.content).toContain('Fix the arguments of calculate_rate');
    // The tool's result goes back inside a declared data block, like the record itself.
    const toolResult = messagesOf(requests[2]!).filter((m) => m.role === 'tool').at(-1)!.content;
    expect(toolResult).toMatch(/^<tool_result>\n[\s\S]*"rate": 0\.75[\s\S]*\n<\/tool_result>$/);

    expect(result).toMatchObject({ passed: true, attempts: 2, parsedAs: 'exact' });
    expect(result.toolCalls.map((c) => c.success)).toEqual([false, true]);
    expect(result.toolCalls[1]!.result).toMatchObject({ rate: 0.75 });

    const stored = await ctx.trace.get(trace.traceId, ALL_TRACES);
    // Each round of the loop is a step with its thought, actions and observations, around the model and tool spans.
    expect(stored!.spans.map((s) => `${s.kind}:${s.name}:${s.status}`)).toEqual([
      'step:soft_rule:success',
      'step:soft_rule:round 1:failed',
      'llm:scripted-model:success',
      'tool:calculate_rate:failed',
      'step:soft_rule:round 2:success',
      'llm:scripted-model:success',
      'tool:calculate_rate:success',
      'step:soft_rule:round 3:success',
      'llm:scripted-model:success',
    ]);
    expect(stored!.spans[0]!.output).toMatchObject({ passed: true, attempts: 2 });
    expect(stored!.spans[1]!.output).toMatchObject({ outcome: 'tool_failed', actions: [{ tool: 'calculate_rate' }] });
    expect(stored!.spans[4]!.output).toMatchObject({ outcome: 'tools', observations: [expect.stringContaining('"rate": 0.75')] });
    expect(stored!.spans[7]!.output).toMatchObject({ outcome: 'answer' });
  });

  it('asks for corrected JSON naming `passed` when the answer leaves it out, then accepts the correction', async () => {
    model.push({ reply: '{"reason": "looks fine", "confidence": 0.7, "evidence": "none"}' }, { reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(requests).toHaveLength(2);
    const messages = messagesOf(requests[1]!);
    expect(messages.at(-2)).toMatchObject({ role: 'assistant', content: '{"reason": "looks fine", "confidence": 0.7, "evidence": "none"}' });
    expect(messages.at(-1)!.role).toBe('user');
    expect(messages.at(-1)!.content).toContain('passed: missing; this field is required');
    expect(messages.at(-1)!.content).toContain('corrected JSON object only');
    // The one correction message of every agent, with the judge's verdict shape.
    const check = checkVerdict('{"reason": "looks fine", "confidence": 0.7, "evidence": "none"}');
    expect(messages.at(-1)).toEqual(correctionMessage(check.ok ? [] : check.problems, SOFT_RULE_DEFINITION.answerShape));
    expect(result).toMatchObject({ passed: true, attempts: 2 });
  });

  it('sends back a wrongly typed field as a path: message line', async () => {
    model.push({ reply: '{"passed": "yes", "reason": "ok", "confidence": 0.7, "evidence": "x"}' }, { reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(messagesOf(requests[1]!).at(-1)!.content).toContain('passed: must be boolean');
    expect(result.passed).toBe(true);
  });

  it('gives up with needs human review and confidence 0 after 3 unusable answers, making exactly 3 model calls', async () => {
    model.push({ reply: 'The record looks fine to me.' }, { reply: '{"passed": "maybe"}' }, { reply: '通过' });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD));
    expect(requests).toHaveLength(3);
    expect(result.passed).toBe(false);
    expect(result.confidence).toBe(0);
    expect(result.reason).toMatch(/^needs human review: /);
    expect(result).toMatchObject({ attempts: 3, parsedAs: 'failed', evidence: '' });
    expect(isNeedsHumanReview(result)).toBe(true);
  });

  it('refuses a tool outside options.tools without running it and feeds the refusal back', async () => {
    model.push({ toolCalls: [{ name: 'count_invocations', arguments: {}, id: 'call_x' }] }, { reply: GOOD });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD, { tools: ['calculate_rate'] }));
    expect(invocations).toBe(0);
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'count_invocations', success: false })]);
    const refusal = messagesOf(requests[1]!).find((m) => m.role === 'tool');
    expect(refusal).toMatchObject({ tool_call_id: 'call_x' });
    expect(refusal!.content).toContain('"count_invocations" is not allowed for this rule. Allowed tools: calculate_rate.');
    expect(result).toMatchObject({ passed: true, attempts: 2 });
  });

  it('withholds tools once maxToolRounds are used, so a model that keeps calling tools cannot loop forever', async () => {
    const call = { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 1, denominator: 2 } }] };
    model.push(call, call, call);
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, INSTRUCTION, RECORD, { tools: ['calculate_rate'], maxToolRounds: 2, maxRetries: 1 }));
    expect(requests).toHaveLength(3);
    expect(requests[2]!.body.tools).toBeUndefined();
    expect(result.toolCalls.map((c) => c.success)).toEqual([true, true, false]);
    expect(result.toolCalls[2]!.error).toContain('No more tool calls');
    expect(isNeedsHumanReview(result)).toBe(true);
  });

  it('throws LLM_RATE_LIMITED when the endpoint still answers 429 after the client retries', async () => {
    // LLM_MAX_RETRIES is 2 in the test context: the first try and two retries.
    const limited = { status: 429, headers: { 'retry-after': '0' } };
    model.push(limited, limited, limited);
    const before = model.requests.length;
    const error = await runWithRetry(deps, INSTRUCTION, RECORD).catch((e: unknown) => e);
    expect(ClinAgentError.isInstance(error) && error.code).toBe('LLM_RATE_LIMITED');
    expect(model.requests.length - before).toBe(3);
  });

  it('sends the Chinese record context to the model intact and keeps a Chinese verdict as written', async () => {
    model.push({ reply: '{"passed": false, "reason": "头晕可能与血压控制不佳有关", "confidence": 0.6, "evidence": "血压: 150/95 mmHg"}' });
    const { result, requests } = await requestsDuring(() => runWithRetry(deps, '检查不良事件与既往史是否一致', RECORD));
    const user = messagesOf(requests[0]!)[1]!;
    expect(user.role).toBe('user');
    expect(user.content).toContain('高血压 10 年,规律服用氨氯地平');
    // The record arrives as JSON inside a <record> data block (core/llm/untrusted-data.ts).
    expect(JSON.parse(user.content!.slice(user.content!.indexOf('{'), user.content!.lastIndexOf('}') + 1))).toEqual(RECORD);
    expect(messagesOf(requests[0]!)[0]!.content).toContain('检查不良事件与既往史是否一致');
    expect(result).toMatchObject({ reason: '头晕可能与血压控制不佳有关', evidence: '血压: 150/95 mmHg' });
  });

  it('rejects bad options and unknown tools before calling the model, listing every problem', async () => {
    const before = model.requests.length;
    const bad = await runWithRetry(deps, '  ', RECORD, { maxRetries: 0 }).catch((e: unknown) => e);
    expect(ClinAgentError.isInstance(bad) && bad.code).toBe('VALIDATION_FAILED');
    expect((bad as Error).message).toContain('instruction: the instruction is empty');
    expect((bad as Error).message).toContain('maxRetries: ');
    const unknown = await runWithRetry(deps, INSTRUCTION, RECORD, { tools: ['no_such_tool'] }).catch((e: unknown) => e);
    expect(ClinAgentError.isInstance(unknown) && unknown.code).toBe('NOT_FOUND');
    expect(model.requests.length).toBe(before);
  });
});
