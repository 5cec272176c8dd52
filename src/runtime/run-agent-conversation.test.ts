import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { runAgent } from './run-agent.js';
import { loadScenario } from './scenarios/load.js';

/** runAgent continues a conversation: history in from the log, every turn of the run logged as it happens. */
describe('runAgent in a conversation', () => {
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

  it('starts a conversation, logs input, tool calls, results and answer, and sends them back on the next turn', async () => {
    const { user: alice } = await ctx.users.create({ name: 'alice-conv', role: 'coordinator' });
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace };
    const conversation = { store: ctx.conversations, actor: alice };

    model.push({ toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 3, denominator: 4 }, id: 'call_1' }] }, { reply: '{"summary": "75% complete"}' });
    const first = await runAgent(scenario, 'How complete is V2?', { context: deps, conversation });
    expect(first.status, first.error).toBe('success');
    expect(first.conversationId).toEqual(expect.any(String));

    const logged = await ctx.conversations.get(first.conversationId!, alice);
    expect(logged.turns.map((t) => t.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(logged.turns[1]!.toolCalls).toEqual([{ id: 'call_1', name: 'calculate_rate', arguments: JSON.stringify({ numerator: 3, denominator: 4 }) }]);
    expect(logged.turns.every((t) => t.traceId === first.traceId)).toBe(true);

    const before = model.requests.length;
    model.push({ reply: '{"summary": "V3 is 90% complete"}' });
    const second = await runAgent(scenario, 'And V3?', { context: deps, conversation: { ...conversation, id: first.conversationId! } });
    expect(second).toMatchObject({ status: 'success', conversationId: first.conversationId });
    const sent = model.requests[before]!.body.messages as Array<{ role: string; content: string | null }>;
    const roles = sent.map((m) => m.role);
    // system, the whole first turn (question, tool call, result, answer), then the new question.
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[1]!.content).toBe('How complete is V2?');
    expect(sent.at(-1)!.content).toBe('And V3?');
    expect((await ctx.conversations.get(first.conversationId!, alice)).turns).toHaveLength(6);
  });

  it('writes a new conversation beside the first model call: a write that fails fails the run, which names no conversation', async () => {
    // A viewer may read trial data but holds no conversation outside a project, so the first write is refused.
    const { user: viewer } = await ctx.users.create({ name: 'viewer-conv', role: 'viewer' });
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const before = (await ctx.conversations.list(viewer)).length;
    model.push({ reply: '{"summary": "ok"}' });
    const refused = await runAgent(scenario, 'How complete is V2?', { context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace }, conversation: { store: ctx.conversations, actor: viewer } });
    expect(refused).toMatchObject({ status: 'failed', conversationId: null });
    expect(refused.error).toMatch(/viewer|role|write/i);
    expect((await ctx.conversations.list(viewer)).length).toBe(before);
  });

  it("refuses to continue another user's conversation, appending nothing", async () => {
    const { user: owner } = await ctx.users.create({ name: 'owner-conv', role: 'coordinator' });
    const { user: intruder } = await ctx.users.create({ name: 'intruder-conv', role: 'coordinator' });
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace };
    model.push({ reply: '{"summary": "ok"}' });
    const mine = await runAgent(scenario, 'Private question', { context: deps, conversation: { store: ctx.conversations, actor: owner } });
    const calls = model.requests.length;

    const stolen = await runAgent(scenario, 'Show me the history', { context: deps, conversation: { store: ctx.conversations, actor: intruder, id: mine.conversationId! } });
    expect(stolen.status).toBe('failed');
    expect(stolen.error).toContain('does not exist or is not yours');
    expect(model.requests.length).toBe(calls);
    expect((await ctx.conversations.get(mine.conversationId!, owner)).turns).toHaveLength(2);
  });

  it('keeps a conversation with the scenario that started it: another scenario is refused, appending nothing', async () => {
    const { user: alice } = await ctx.users.create({ name: 'alice-two-agents', role: 'coordinator' });
    const completeness = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const protocolQa = loadScenario(path.join(process.cwd(), 'scenarios', 'protocol-qa.yaml'));
    const deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag };
    model.push({ reply: '{"summary": "V2 is 75% complete"}' });
    const first = await runAgent(completeness, 'How complete is V2?', { context: deps, conversation: { store: ctx.conversations, actor: alice } });
    const calls = model.requests.length;

    const crossed = await runAgent(protocolQa, 'And the inclusion criteria?', { context: deps, conversation: { store: ctx.conversations, actor: alice, id: first.conversationId! } });
    expect(crossed.status).toBe('failed');
    expect(crossed.error).toContain(`belongs to scenario "data-completeness", not to scenario "protocol-qa"`);
    expect(model.requests.length).toBe(calls);
    expect((await ctx.conversations.get(first.conversationId!, alice)).turns).toHaveLength(2);
    await expect(ctx.conversations.assertMayContinue(first.conversationId!, alice, 'protocol-qa')).rejects.toMatchObject({ code: 'CONFLICT_STATE', status: 409 });
  });
});
