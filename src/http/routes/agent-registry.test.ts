import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentRegistry, type AgentRegistry } from '../../runtime/definitions/index.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { registryReplacing } from '../../testing/registry-variant.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

const SCENARIO = 'data-completeness';
const REGISTERED_INSTRUCTIONS = 'You are the data-completeness agent as the registry holds it: answer in one line.';

/**
 * A scenario run reads its definition from the agent registry, not from the scenario catalog: a registry that holds a
 * different definition under the scenario's id (as a test context can build one) is the one that runs.
 */
describe.each(testEngines())('scenario runs resolve their definition from the agent registry on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let agents: AgentRegistry;
  let auth: { authorization: string };

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine });
    // Every agent of the server's registry, the scenario with other instructions: the catalog still has the file's.
    agents = registryReplacing(ctx.tools, ctx.agents, SCENARIO, (definition) => ({ ...definition, instructions: REGISTERED_INSTRUCTIONS }));
    app = await buildServer({ ...ctx, agents }, { serveConsole: false });
    auth = { authorization: `Bearer ${(await ctx.users.create({ name: 'registry-coordinator', role: 'coordinator' })).token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  const systemPromptOf = (request: { body: { messages: Array<{ role: string; content: string }> } }) => request.body.messages.find((message) => message.role === 'system')!.content;

  it('POST /api/agent/run runs the definition the registry holds under the id', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"summary": "No gaps found.", "completion_rate": 1, "issues": [], "action_items": []}' });
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: SCENARIO, input: 'Check site 01.' } });
    expect(response.statusCode).toBe(200);
    const system = systemPromptOf(model.requests[before]!);
    expect(system).toContain(REGISTERED_INSTRUCTIONS);
    expect(system).not.toContain(ctx.scenarios.get(SCENARIO).instructions.trim());
  });

  it('the streamed route runs the same registered definition', async () => {
    const before = model.requests.length;
    model.push({ reply: '{"summary": "No gaps found.", "completion_rate": 1, "issues": [], "action_items": []}' });
    const response = await app.inject({ method: 'POST', url: '/api/agent/run/stream', headers: auth, payload: { scenarioId: SCENARIO, input: 'Check site 02.' } });
    expect(response.statusCode).toBe(200);
    expect(systemPromptOf(model.requests[before]!)).toContain(REGISTERED_INSTRUCTIONS);
  });

  it('refuses an agent that is not a scenario as an unknown scenario, naming the scenarios and no internal agent', async () => {
    const before = model.requests.length;
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'soft_rule', input: 'Judge this.' } });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('NOT_FOUND');
    expect(response.json().message).toContain(SCENARIO);
    expect(response.json().message).not.toContain('memory_prune');
    expect(model.requests).toHaveLength(before);
  });

  it('POST /api/agent/runs starts only a scenario: an internal agent with a text prompt is refused before anything is stored', async () => {
    const before = model.requests.length;
    const response = await app.inject({ method: 'POST', url: '/api/agent/runs', headers: auth, payload: { scenarioId: 'memory_weekly_report', input: 'Summarise.' } });
    expect(response.statusCode).toBe(404);
    expect(response.json().message).not.toContain('memory_prune');
    const listed = await app.inject({ method: 'GET', url: '/api/agent/runs?agent=memory_weekly_report', headers: auth });
    expect(listed.json().runs).toEqual([]);
    expect(model.requests).toHaveLength(before);
  });

  it('does not run a scenario the catalog has but the registry lacks', async () => {
    const without = createAgentRegistry(ctx.tools);
    without.registerAll(ctx.agents.list().filter((definition) => definition.id !== SCENARIO));
    const other = await buildServer({ ...ctx, agents: without }, { serveConsole: false });
    try {
      const before = model.requests.length;
      const response = await other.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: SCENARIO, input: 'Check.' } });
      expect(response.statusCode).toBe(404);
      expect(response.json().message).toContain('not in the agent registry');
      expect(model.requests).toHaveLength(before);
    } finally {
      await other.close();
    }
  });
});
