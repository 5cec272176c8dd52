import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSummary } from '../../contract/index.js';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

// The listing reads the registry built at start-up, not the database: PGlite only.
describe('GET /api/agents: the one registry of agents', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let admin: { authorization: string };
  let coordinator: { authorization: string };
  let viewer: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    admin = { authorization: `Bearer ${(await ctx.users.create({ name: 'agents-admin', role: 'admin' })).token}` };
    coordinator = { authorization: `Bearer ${(await ctx.users.create({ name: 'agents-coordinator', role: 'coordinator' })).token}` };
    viewer = { authorization: `Bearer ${(await ctx.users.create({ name: 'agents-viewer', role: 'viewer' })).token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  async function list(headers: { authorization: string }): Promise<AgentSummary[]> {
    const response = await app.inject({ method: 'GET', url: '/api/agents', headers });
    expect(response.statusCode).toBe(200);
    return response.json().agents;
  }

  it('shows an admin every registered agent, with its kind, engine, tools, answer schema and limits', async () => {
    const agents = await list(admin);
    const byId = new Map(agents.map((agent) => [agent.id, agent]));
    expect(agents.map((agent) => agent.id).sort()).toEqual(ctx.agents.list().map((definition) => definition.id).sort());
    // The agents in code, the one-round calls, the consult, the staged agent and the scenarios files, all from one registry.
    for (const id of ['investigate', 'route_intent', 'soft_rule', 'memory_prune', 'memory_distill', 'memory_weekly_report', 'memory_yearly_summary', 'staged_reflexion', 'conversation_summary', 'dermatology_consult']) expect(byId.has(id), id).toBe(true);
    for (const scenario of ctx.scenarios.list()) expect(byId.get(scenario.id)?.kind).toBe('scenario');
    expect(agents.some((agent) => agent.kind === 'staged' && agent.stages!.length > 0)).toBe(true);

    expect(byId.get('soft_rule')).toMatchObject({
      kind: 'internal',
      engine: { type: 'builtin' },
      answer: { format: 'json', schema: { type: 'object', required: expect.arrayContaining(['passed', 'reason', 'confidence', 'evidence']) } },
      limits: { attempts: 3, maxToolRounds: 4 },
    });
    expect(byId.get('dermatology_consult')).toMatchObject({
      kind: 'conversation',
      tools: expect.arrayContaining(['assess_risk']),
      requestTools: expect.arrayContaining(['analyze_skin_image']),
      answer: { format: 'decision', schema: { properties: { action: { const: 'diagnose' } } } },
    });
    expect(byId.get('memory_weekly_report')).toMatchObject({ kind: 'one_shot', answer: { format: 'text', schema: { type: 'string' } }, limits: { maxRounds: 1 } });
    expect(byId.get('investigate')).toMatchObject({ kind: 'conversation', requestTools: expect.arrayContaining(['read_clinical_data']) });
  });

  it('shows a writer role the agents it can start: scenarios, staged agents and conversations; no judge, router or upkeep agent', async () => {
    const agents = await list(coordinator);
    expect(new Set(agents.map((agent) => agent.kind))).toEqual(new Set(['scenario', 'staged', 'conversation']));
    const ids = agents.map((agent) => agent.id);
    expect(ids).toEqual(expect.arrayContaining(['dermatology_consult', 'investigate', ...ctx.scenarios.list().map((scenario) => scenario.id)]));
    for (const hidden of ['soft_rule', 'route_intent', 'memory_prune', 'memory_distill', 'conversation_summary']) expect(ids).not.toContain(hidden);
  });

  it('shows a viewer only the trial assistant: the scenario, consult and protocol routes refuse a viewer, so they are not listed', async () => {
    const agents = await list(viewer);
    expect(agents.map((agent) => agent.id)).toEqual(['investigate']);
    // What the list leaves out is what the routes refuse: a viewer may not run a scenario nor start a consult or a protocol.
    const scenario = ctx.scenarios.list()[0]!.id;
    const run = await app.inject({ method: 'POST', url: '/api/agent/run', headers: viewer, payload: { scenarioId: scenario, input: 'Check.' } });
    expect(run.statusCode).toBe(403);
    const consult = await app.inject({ method: 'POST', url: '/api/consult/sessions', headers: viewer, payload: {} });
    expect(consult.statusCode).toBe(403);
    const protocol = await app.inject({ method: 'POST', url: '/api/aia/protocol-agent/conversations', headers: viewer, payload: {} });
    expect(protocol.statusCode).toBe(403);
  });

  it('needs a token', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/agents' });
    expect(response.statusCode).toBe(401);
  });
});
