import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const ADMIN_TOKEN = 'admin-token-for-trace-tests-0123456789';

/**
 * Traces hold whole prompts, and prompts hold record data: a coordinator reads the traces of their own agent
 * runs and of runs over their projects, nothing else, and someone else's trace looks exactly like a missing one.
 */
describe.each(testEngines())('trace visibility on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  const token: Record<'a' | 'b', string> = { a: '', b: '' };
  const ids = { ownAgent: '', otherAgent: '', projectA: '', projectB: '' };

  const get = (url: string, bearer: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } });

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: '{"summary": "All required fields are present.", "completion_rate": 1, "issues": [], "action_items": []}' } });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.bootstrapAdmin(ADMIN_TOKEN);
    for (const project of ['trial-a', 'trial-b']) await ctx.users.createProject({ id: project, name: project });
    const a = await ctx.users.create({ name: 'coordinator-a', role: 'coordinator' });
    const b = await ctx.users.create({ name: 'coordinator-b', role: 'coordinator' });
    await ctx.users.addMember('trial-a', a.user.id);
    await ctx.users.addMember('trial-b', b.user.id);
    token.a = a.token;
    token.b = b.token;

    // Agent runs through the route, so the route has to record who ran them.
    const run = async (bearer: string) => {
      const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { authorization: `Bearer ${bearer}` }, payload: { scenarioId: 'data-completeness', input: 'Check consent dates' } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().traceId as string;
    };
    ids.ownAgent = await run(token.a);
    ids.otherAgent = await run(token.b);
    // SOP runs are traced with the project whose records they read, and no user.
    for (const [key, projectId] of [['projectA', 'trial-a'], ['projectB', 'trial-b']] as const) {
      const trace = await ctx.trace.start({ kind: 'sop', name: `demo-core-checks:S001`, input: { record: { sbp: 300 } }, projectId });
      await trace.finish({ status: 'success' });
      ids[key] = trace.traceId;
    }
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  it('lists only your own agent runs and the runs over your projects', async () => {
    const response = await get('/api/traces', token.a);

    expect(response.statusCode).toBe(200);
    expect(response.json().traces.map((t: { id: string }) => t.id).sort()).toEqual([ids.ownAgent, ids.projectA].sort());
    expect(response.json().traces.find((t: { id: string }) => t.id === ids.projectA)).toMatchObject({ projectId: 'trial-a', kind: 'sop' });
  });

  it("answers 404, as for a missing trace, for another project's trace and another user's agent run", async () => {
    for (const id of [ids.projectB, ids.otherAgent]) {
      const response = await get(`/api/traces/${id}`, token.a);
      expect(response.statusCode, id).toBe(404);
      expect(response.json().code).toBe('NOT_FOUND');
      expect(response.body).not.toContain('sbp');
    }
    const missing = await get('/api/traces/00000000-0000-4000-8000-000000000000', token.a);
    expect(missing.json().message).toBe((await get(`/api/traces/${ids.projectB}`, token.a)).json().message.replace(ids.projectB, '00000000-0000-4000-8000-000000000000'));
  });

  it('reads your own agent run and a run over your project in full', async () => {
    const own = await get(`/api/traces/${ids.ownAgent}`, token.a);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ kind: 'agent', userId: expect.any(String), spans: [expect.objectContaining({ kind: 'step' }), expect.objectContaining({ kind: 'llm' })] });
    const project = await get(`/api/traces/${ids.projectA}`, token.a);
    expect(project.statusCode).toBe(200);
    expect(project.json().input).toEqual({ record: { sbp: 300 } });
  });

  it('lets an admin list and read every trace', async () => {
    const listed = (await get('/api/traces', ADMIN_TOKEN)).json().traces.map((t: { id: string }) => t.id);
    expect(listed).toEqual(expect.arrayContaining(Object.values(ids)));
    for (const id of Object.values(ids)) expect((await get(`/api/traces/${id}`, ADMIN_TOKEN)).statusCode).toBe(200);
  });
});
