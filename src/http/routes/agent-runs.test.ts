import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun } from '../../contract/index.js';
import type { User } from '../../core/auth/users.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { INTAKE_ASK, INTAKE_RESPOND, INTAKE_SCENARIO } from '../../testing/intake-agent.js';
import { waitFor } from '../../testing/wait-for.js';
import { buildServer } from '../server.js';

const ASK = INTAKE_ASK;
const RESPOND = INTAKE_RESPOND;

describe.each(testEngines())('durable agent runs through the API on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let model: ScriptedModel;
  let scenariosDir: string;
  let workers: { stop(): void } | undefined;
  const users: Record<'owner' | 'other' | 'admin', { user: User; token: string }> = {} as never;

  const call = (method: 'GET' | 'POST', url: string, who: keyof typeof users, payload?: unknown) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${users[who].token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const runOf = async (id: string, who: keyof typeof users = 'owner') => (await call('GET', `/api/agent/runs/${id}`, who)).json<AgentRun>();
  const auditOf = async (id: string) => (await ctx.db.select().from(auditLog).where(and(eq(auditLog.entityType, 'agent_run'), eq(auditLog.entityId, id))).orderBy(asc(auditLog.id))).map((e) => e.action);

  beforeAll(async () => {
    scenariosDir = mkdtempSync(path.join(tmpdir(), 'clinagent-agent-runs-'));
    writeFileSync(path.join(scenariosDir, 'test-intake.yaml'), INTAKE_SCENARIO);
    model = await startScriptedModel([], { fallback: { reply: RESPOND } });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, startJobs: true, env: { SCENARIOS_DIR: scenariosDir } });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.bootstrapAdmin('admin-token-for-agent-run-tests-0123456789');
    users.owner = await ctx.users.create({ name: 'coordinator-owner', role: 'coordinator' });
    users.other = await ctx.users.create({ name: 'coordinator-other', role: 'coordinator' });
    users.admin = await ctx.users.create({ name: 'admin-two', role: 'admin' });
    workers = await ctx.agentRunHost.start({ concurrency: 1, sweepIntervalMs: 60_000, staleMs: 60_000 });
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
    await model?.close();
    if (scenariosDir) rmSync(scenariosDir, { recursive: true, force: true });
  });

  it('waits for the answer, goes on with it once, finishes with its answer, and audits each event once', async () => {
    model.push({ reply: ASK });
    const started = await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'I have a cough.' });
    expect(started.statusCode).toBe(202);
    const { id } = started.json<AgentRun>();

    const waiting = await waitFor(async () => { const run = await runOf(id); return run.status === 'SUSPENDED' ? run : undefined; }, 'the run to wait for an answer', 20_000, 50);
    expect(waiting).toMatchObject({ agent: 'test-intake', waiting: { awaiting: 'answer', prompt: 'How long has the cough lasted?', dataHash: expect.stringMatching(/^[0-9a-f]{64}$/) }, answer: null });
    // A decision is not what it waits for; an answer bound to another version of the question is refused.
    expect((await call('POST', `/api/agent/runs/${id}/decision`, 'owner', { decision: 'approve' })).statusCode).toBe(400);
    expect((await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'three weeks', dataHash: 'f'.repeat(64) })).statusCode).toBe(409);

    const answered = await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'three weeks', dataHash: waiting.waiting!.dataHash });
    expect(answered.statusCode).toBe(200);
    expect((await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'again' })).statusCode).toBe(409);
    const done = await waitFor(async () => { const run = await runOf(id); return run.status === 'COMPLETED' ? run : undefined; }, 'the run to finish', 20_000, 50);
    expect(done).toMatchObject({ answer: 'Three weeks of cough: see your doctor this week.', waiting: null, error: null });

    // The second model call saw the question and the answer once, as the user's message.
    const second = model.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(second.filter((m) => m.content === 'three weeks')).toEqual([{ role: 'user', content: 'three weeks' }]);
    expect(await auditOf(id)).toEqual(['created', 'waiting', 'decided', 'finished']);

    // The run answers in a conversation of its agent: the input, its question, the reply and its answer, once each.
    expect(done.conversationId).toEqual(expect.any(String));
    const turns = await waitFor(async () => {
      const conversation = (await call('GET', `/api/conversations/${done.conversationId}`, 'owner')).json<{ scenarioId: string; turns: Array<{ role: string; content: string }> }>();
      return conversation.turns.length >= 4 ? conversation : undefined;
    }, 'the run\'s answer in its conversation', 20_000, 50);
    expect(turns.scenarioId).toBe('test-intake');
    expect(turns.turns.map((t) => [t.role, t.content])).toEqual([
      ['user', 'I have a cough.'],
      ['assistant', 'How long has the cough lasted?'],
      ['user', 'three weeks'],
      ['assistant', 'Three weeks of cough: see your doctor this week.'],
    ]);
  });

  it('shows a run only to its user (404 to others) and to admins, and lists runs per agent and user, newest first', async () => {
    const first = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'first' })).json<AgentRun>();
    const second = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'second' })).json<AgentRun>();
    expect((await call('GET', `/api/agent/runs/${first.id}`, 'other')).statusCode).toBe(404);
    expect((await call('POST', `/api/agent/runs/${first.id}/cancel`, 'other')).statusCode).toBe(404);
    expect((await call('POST', `/api/agent/runs/${first.id}/answer`, 'admin', { answer: 'x' })).statusCode).toBe(404);
    expect((await call('GET', `/api/agent/runs/${first.id}`, 'admin')).statusCode).toBe(200);

    const page = (await call('GET', '/api/agent/runs?agent=test-intake&limit=2', 'owner')).json<{ runs: AgentRun[]; nextBefore: string | null }>();
    expect(page.runs.map((r) => r.id)).toEqual([second.id, first.id]);
    const next = (await call('GET', `/api/agent/runs?agent=test-intake&limit=2&before=${encodeURIComponent(page.nextBefore!)}`, 'owner')).json<{ runs: AgentRun[] }>();
    expect(next.runs.map((r) => r.id)).not.toContain(first.id);
    expect((await call('GET', '/api/agent/runs', 'other')).json<{ runs: AgentRun[] }>().runs).toEqual([]);
    expect((await call('GET', `/api/agent/runs?user=${users.owner.user.id}`, 'other')).statusCode).toBe(403);
    expect((await call('GET', `/api/agent/runs?user=${users.owner.user.id}&limit=200`, 'admin')).json<{ runs: AgentRun[] }>().runs.map((r) => r.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    // Both answer at once (the model's default reply), so no later case's scripted question goes to them.
    for (const run of [first, second]) await waitFor(async () => (await runOf(run.id)).status === 'COMPLETED', 'the listed runs to finish', 20_000, 50);
  });

  it('ends a run whose model call fails for good as FAILED saying why, rather than retrying it for ever', async () => {
    model.push({ status: 400, body: { error: { message: 'model "qwen-typo" does not exist', type: 'invalid_request_error' } } });
    const { id } = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'a failing turn' })).json<AgentRun>();
    const failed = await waitFor(async () => { const run = await runOf(id); return run.status === 'FAILED' ? run : undefined; }, 'the run to fail', 20_000, 50);
    expect(failed.error).toBe('The language model service rejected the request (HTTP 400). Try again; if it keeps happening, tell your administrator.');
    expect(failed.error).not.toContain(model.baseURL);
    expect(await auditOf(id)).toEqual(['created', 'finished']);
  });

  it('never completes with an answer cut off by the token limit: asked again it completes whole, cut off twice it fails saying so', async () => {
    // The first cut-off answer is asked again and the second (the model's default reply) is the whole advice.
    model.push({ reply: '{"action": "respond", "answer": "Che', finishReason: 'length' });
    const asked = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'a long answer' })).json<AgentRun>();
    expect(await waitFor(async () => { const run = await runOf(asked.id); return run.status === 'COMPLETED' || run.status === 'FAILED' ? run : undefined; }, 'the run to end', 20_000, 50)).toMatchObject({ status: 'COMPLETED', answer: 'Three weeks of cough: see your doctor this week.' });

    // Valid JSON, but finish_reason "length": still not the answer.
    model.push({ reply: '{"action": "respond", "answer": "Che"}', finishReason: 'length' }, { reply: '{"action": "respond", "answer": "Half an ans', finishReason: 'length' });
    const { id } = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'a very long answer' })).json<AgentRun>();
    const failed = await waitFor(async () => { const run = await runOf(id); return run.status === 'COMPLETED' || run.status === 'FAILED' ? run : undefined; }, 'the run to end', 20_000, 50);
    expect(failed).toMatchObject({ status: 'FAILED', answer: null });
    expect(failed.error).toMatch(/cut off by its output token limit/);
  });

  it('keeps the person\u2019s answer when the model fails right after it: the run waits the outage out, then can be retried and goes on with it', async () => {
    model.push({ reply: ASK });
    const { id } = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'a cough, and then an outage' })).json<AgentRun>();
    const waiting = await waitFor(async () => { const run = await runOf(id); return run.status === 'SUSPENDED' ? run : undefined; }, 'the run to wait for an answer', 20_000, 50);
    const down = { status: 500 };
    // Each attempt is one model call and the client's two retries; the first attempt is the worker's.
    model.push(down, down, down);
    const calls = model.requests.length;
    expect((await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'three weeks', dataHash: waiting.waiting!.dataHash })).statusCode).toBe(200);
    const pending = await waitFor(async () => { const run = await runOf(id); return run.status === 'PENDING' && run.error ? run : undefined; }, 'the run to wait for the model', 20_000, 50);
    expect(pending.error).toMatch(/^Waiting for the model, which was unavailable \(attempt 1 of 2; the next in about 5 s\)/);
    expect(model.requests.length - calls).toBe(3);
    // The second attempt is a job that starts 5 s later; its worker takes it then.
    model.push(down, down, down);
    const failed = await waitFor(async () => { const run = await runOf(id); return run.status === 'FAILED' ? run : undefined; }, 'the second attempt to fail', 20_000, 50);
    expect(model.requests.length - calls).toBe(6);
    expect(failed.error).toMatch(/^The model was unavailable on all 2 attempts: The language model service failed \(HTTP 500\).*Nothing you said is lost: retry the run/);
    expect(failed.error).not.toContain(model.baseURL);

    // Answering again is refused (the answer is already taken); a retry goes on with it once the model is back.
    expect((await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'three weeks' })).statusCode).toBe(409);
    expect((await call('POST', `/api/agent/runs/${id}/retry`, 'other')).statusCode).toBe(404);
    const retried = await call('POST', `/api/agent/runs/${id}/retry`, 'owner');
    expect(retried.statusCode).toBe(202);
    const done = await waitFor(async () => { const run = await runOf(id); return run.status === 'COMPLETED' ? run : undefined; }, 'the retried run to finish', 20_000, 50);
    expect(done).toMatchObject({ answer: 'Three weeks of cough: see your doctor this week.', error: null });
    const last = model.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(last.filter((m) => m.content === 'three weeks')).toEqual([{ role: 'user', content: 'three weeks' }]);
    expect((await call('POST', `/api/agent/runs/${id}/retry`, 'owner')).statusCode).toBe(409);
    expect(await auditOf(id)).toEqual(['created', 'waiting', 'decided', 'finished', 'retried', 'finished']);
  });

  it('never completes with an answer too long to show: asked again, it completes with the short one', async () => {
    model.push({ reply: JSON.stringify({ action: 'respond', answer: 'Rest. '.repeat(5000) }) });
    const { id } = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'a long answer, please' })).json<AgentRun>();
    const done = await waitFor(async () => { const run = await runOf(id); return run.status === 'COMPLETED' || run.status === 'FAILED' ? run : undefined; }, 'the run to end', 20_000, 50);
    expect(done).toMatchObject({ status: 'COMPLETED', answer: 'Three weeks of cough: see your doctor this week.' });
  });

  it('refuses to start a run when no model is configured, storing nothing', async () => {
    const bare = await buildTestContext({ engine, env: { SCENARIOS_DIR: scenariosDir } });
    try {
      const { user } = await bare.users.create({ name: 'coordinator-bare', role: 'coordinator' });
      await expect(bare.agentRuns.start(user, { scenarioId: 'test-intake', input: 'hello' })).rejects.toMatchObject({ code: 'LLM_NOT_CONFIGURED', message: expect.stringContaining('LLM_BASE_URL') });
      expect(await bare.agentRuns.list(user, {})).toEqual([]);
    } finally {
      await bare.close();
    }
  });

  it('cancels a waiting run for good: CANCELLED, audited once, and an answer afterwards is refused', async () => {
    model.push({ reply: ASK });
    const { id } = (await call('POST', '/api/agent/runs', 'owner', { scenarioId: 'test-intake', input: 'cancel me' })).json<AgentRun>();
    await waitFor(async () => (await runOf(id)).status === 'SUSPENDED', 'the run to wait', 20_000, 50);
    const cancelled = await call('POST', `/api/agent/runs/${id}/cancel`, 'owner');
    expect(cancelled.json<AgentRun>()).toMatchObject({ status: 'CANCELLED', waiting: null });
    expect((await call('POST', `/api/agent/runs/${id}/cancel`, 'owner')).statusCode).toBe(409);
    expect((await call('POST', `/api/agent/runs/${id}/answer`, 'owner', { answer: 'too late' })).statusCode).toBe(409);
    expect(await auditOf(id)).toEqual(['created', 'waiting', 'cancelled']);
  });
});
