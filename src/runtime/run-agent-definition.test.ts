import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { runAgent, type AgentDeps } from './run-agent.js';
import { loadScenario } from './scenarios/load.js';

/** A scenario file's `decision:` and `stop:` blocks reach the loop: the definition is what runs, not just what loads. */
describe('runAgent runs the definition a scenario file compiles to', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let deps: AgentDeps;
  let dir: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace };
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-definition-'));
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  const scenario = (name: string, body: string) => {
    const file = path.join(dir, `${name}.yaml`);
    writeFileSync(file, `id: ${name}\nname: ${name}\nsystem_prompt: Compute rates.\ntools: [calculate_rate]\n${body}`);
    return loadScenario(file);
  };
  const rateCall = { toolCalls: [{ name: 'calculate_rate', arguments: { numerator: 1, denominator: 2 } }] };

  it('stops at stop.max_rounds and fails naming the limit and the file', async () => {
    model.push(rateCall, rateCall, rateCall);
    const before = model.requests.length;
    const result = await runAgent(scenario('capped', 'max_tool_rounds: 10\nstop: { max_rounds: 2 }\n'), 'rate?', { context: deps });
    expect(model.requests.length - before).toBe(2);
    expect(result.status).toBe('failed');
    expect(result.error).toContain('max_rounds');
    expect(result.error).toContain('capped.yaml');
    model.requests.length = 0;
  });

  it('decides in JSON when decision.mode is json: a use_tool decision runs the tool, another action answers', async () => {
    model.push(
      { reply: '{"action": "use_tool", "tool": "calculate_rate", "arguments": {"numerator": 1, "denominator": 2}}' },
      { reply: '{"action": "respond", "text": "The rate is 50%."}' },
    );
    const result = await runAgent(scenario('decider', 'decision: { mode: json, actions: [use_tool, respond], tool_action: use_tool }\n'), 'rate?', { context: deps });
    expect(result.status).toBe('success');
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculate_rate', success: true })]);
    expect(result.rawOutput).toContain('"respond"');
    // The person reads the decision's text, not its JSON.
    expect(result.answer).toBe('The rate is 50%.');
  });

  it('ends a turn that waits for the person (decision.wait_on) with a waiting event and their question as the answer', async () => {
    model.push({ reply: '{"action": "ask", "question": "Over which visits should the rate be computed?"}' });
    const events: Array<{ type: string }> = [];
    const result = await runAgent(scenario('asker', 'decision: { mode: json, actions: [use_tool, ask, respond], tool_action: use_tool, wait_on: { ask: answer } }\n'), 'rate?', { context: deps, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'success', answer: 'Over which visits should the rate be computed?' });
    expect(events).toContainEqual({ type: 'waiting', awaiting: 'answer', prompt: 'Over which visits should the rate be computed?' });
  });
});
