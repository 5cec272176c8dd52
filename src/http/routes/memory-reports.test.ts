import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationTurns } from '../../core/db/schema/conversations.js';
import { addWeeks, formatDay, mondayOf } from '../../memory/reports/iso-week.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

/**
 * A weekly report of the week so far, through the API as the console asks for it: in the first week of a new
 * install last week has no conversations, and this week's report is what can be tried.
 */
describe.each(testEngines())('POST /api/iit/projects/:projectId/reports/regenerate for the running week on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let coordinator: { authorization: string };

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: 'The team set up screening logs this week.' } });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    app = await buildServer(ctx, { serveConsole: false });
    const { user, token } = await ctx.users.create({ name: 'crc-reports', role: 'coordinator' });
    await ctx.users.createProject({ id: 'new-trial', name: 'New trial' });
    await ctx.users.addMember('new-trial', user.id);
    coordinator = { authorization: `Bearer ${token}` };
    const { id } = await ctx.conversations.start({ actor: user, projectId: 'new-trial', title: 'first days' });
    // Within this week even when the test runs in its first second.
    const now = new Date();
    const createdAt = new Date(Math.max(mondayOf(now).getTime(), now.getTime() - 1000));
    await ctx.db.insert(conversationTurns).values({ conversationId: id, seq: 1, role: 'user', content: 'How do we keep screening logs?', createdAt });
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  const regenerate = (weekStart: string) => app.inject({ method: 'POST', url: '/api/iit/projects/new-trial/reports/regenerate', headers: coordinator, payload: { weekStart } });

  it("answers this week's report so far, marked partial and ending when it was made, and lists it so", async () => {
    const before = Date.now();
    const thisMonday = mondayOf(new Date());

    const response = await regenerate(formatDay(thisMonday));

    expect(response.statusCode, response.body).toBe(200);
    const { stored, report, notice } = response.json();
    expect([stored, notice]).toEqual([true, null]);
    expect(report).toMatchObject({ periodStart: formatDay(thisMonday), partial: true, summary: 'The team set up screening logs this week.', sourceCount: 1 });
    expect(Date.parse(report.periodEnd)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(report.periodEnd)).toBeLessThanOrEqual(Date.now());
    const listed = await app.inject({ method: 'GET', url: '/api/iit/projects/new-trial/reports', headers: coordinator });
    expect(listed.json().reports).toEqual([report]);
  });

  it('answers 200 with stored false, the report that stands and a plain notice when the new report fails its checks, and never 5xx', async () => {
    const thisMonday = formatDay(mondayOf(new Date()));
    const before = (await app.inject({ method: 'GET', url: '/api/iit/projects/new-trial/reports', headers: coordinator })).json().reports;
    expect(before).toHaveLength(1);
    model.push({ reply: 'The team set up screening logs and then s', finishReason: 'length' });

    const response = await regenerate(thisMonday);

    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ stored: false, report: before[0] });
    expect(response.json().notice).toMatch(/^The new report of week \d{4}-W\d{2} could not be written: the model's answer was unusable /);
    expect(response.json().notice).toMatch(/The previous report of week \d{4}-W\d{2} \(made .+ UTC\) stands unchanged\./);
    const after = await app.inject({ method: 'GET', url: '/api/iit/projects/new-trial/reports', headers: coordinator });
    expect(after.json().reports).toEqual(before);
  });

  it('answers 200 with a plain notice, not the provider\'s words, when the model is down', async () => {
    const thisMonday = formatDay(mondayOf(new Date()));
    const before = (await app.inject({ method: 'GET', url: '/api/iit/projects/new-trial/reports', headers: coordinator })).json().reports;
    const down = { status: 500, body: { error: { message: 'upstream exploded at http://10.9.8.7:8000/v1/chat/completions', type: 'server_error' } } };
    model.push(down, down, down, down);

    const response = await regenerate(thisMonday);

    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ stored: false, report: before[0] });
    expect(response.json().notice).toMatch(/could not be written: the model is unavailable\. The previous report .+ stands unchanged\./);
    expect(response.body).not.toMatch(/10\.9\.8\.7|exploded|server_error/);
  });

  it('still refuses a week that has not started', async () => {
    const nextMonday = formatDay(addWeeks(mondayOf(new Date()), 1));

    const response = await regenerate(nextMonday);

    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'weekStart' } });
    expect(response.json().message).toContain(`(from ${nextMonday}) has not started yet`);
  });
});
