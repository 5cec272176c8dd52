import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditLog } from '../../core/db/schema/audit.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import type { User } from '../../core/auth/users.js';
import { INTAKE_ASK, INTAKE_QUESTION, INTAKE_SCENARIO } from '../../testing/intake-agent.js';
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { registerWorkers } from '../../workers.js';
import { createDefinitionRun, TURN_NODE } from './definition-runs.js';
import { advanceAgentRunQueue } from './run-host.js';

/** A sweep interval no other timer of a process uses, so the timers the workers start at it can be counted. */
const SWEEP_INTERVAL_MS = 4321;
const CONSULT_REPLY = JSON.stringify({ thought: 'Ask how long.', action: 'respond', response: 'How long have you had the rash?', quick_options: ['Days', 'Weeks'] });
const STAGED_REPLY = 'A good question.\n<extracted_data>{"question": "Does exercise reduce falls in adults over 70?"}</extracted_data>';

/** Each agent's answer, by the system prompt that asks: the three runs advance at once, in any order. */
function replyTo(request: RecordedRequest) {
  const system = String(request.body.messages?.[0]?.content ?? '');
  if (system.includes('dermatology consultant')) return { reply: CONSULT_REPLY };
  if (system.includes('Ask the patient how long the symptom has lasted')) return { reply: INTAKE_ASK };
  return { reply: STAGED_REPLY };
}

/**
 * The one run host (issue 33): definition runs, consults and staged agents share one job queue and one orphan sweep,
 * so a process runs QC_CONCURRENCY agent-run pollers and one sweep timer, not three of each; and a run of every
 * family left by a dead worker is found by that one sweep and advanced through that one queue.
 */
describe.each(testEngines())('the agent-run host on %s', (engine) => {
  let model: ScriptedModel;
  let scenariosDir: string;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let owner: User;

  beforeAll(async () => {
    scenariosDir = mkdtempSync(path.join(tmpdir(), 'clinagent-run-host-'));
    writeFileSync(path.join(scenariosDir, 'test-intake.yaml'), INTAKE_SCENARIO);
    model = await startScriptedModel([], { respond: replyTo });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, startJobs: true, env: { SCENARIOS_DIR: scenariosDir, QC_CONCURRENCY: '4', QC_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS), QC_STALE_MS: '1000' } });
    owner = (await ctx.users.create({ name: 'run-host-owner', role: 'pi' })).user;
  });
  afterAll(async () => {
    await ctx?.close();
    await model?.close();
    rmSync(scenariosDir, { recursive: true, force: true });
  });

  it('hosts the three families of agent runs', () => {
    expect(ctx.agentRunHost.families().sort()).toEqual(['agent:', 'consult:', 'staged:']);
  });

  it('recovers a consult, a staged conversation and a definition run left by a dead worker through the one sweep and the one queue', async () => {
    // What each process left behind when it died: the person's input taken (or the run started), the run RUNNING
    // under a lease that lapsed a minute ago, and no job for it anywhere.
    const consult = await ctx.consult.start(owner, { title: 'Rash' });
    const { run: consultRun } = await ctx.consult.get(owner, consult.sessionId);
    await ctx.consult.runs.store.decide(ctx.db, consultRun.id, { kind: 'answer', actor: owner.id, input: { text: 'An itchy red rash on my arm.' } });
    const staged = await ctx.stagedAgents.start(owner, 'protocol_agent', { title: 'Falls' });
    await ctx.stagedAgents.runs.store.decide(ctx.db, staged.run.id, { kind: 'answer', actor: owner.id, input: { text: 'Does exercise reduce falls in adults over 70?' } });
    const definitionRun = await createDefinitionRun(ctx.db, { definitionId: 'test-intake', userId: owner.id, state: { input: 'I have a cough.', messages: [{ role: 'system', content: 'Ask the patient how long the symptom has lasted, then advise.' }, { role: 'user', content: 'I have a cough.' }] } });
    const ids = [consultRun.id, staged.run.id, definitionRun.id];
    const aMinuteAgo = new Date(Date.now() - 60_000);
    for (const id of ids) {
      const [taken] = await ctx.db.update(agentRuns).set({ status: 'RUNNING', leaseOwner: 'dead-worker#1', leaseUntil: new Date(aMinuteAgo.getTime() + 1_000), updatedAt: aMinuteAgo }).where(eq(agentRuns.id, id)).returning();
      expect(taken).toBeDefined();
    }
    expect(await ctx.jobs!.isQueued(advanceAgentRunQueue, 'runId', ids)).toEqual(new Set());

    // The production wiring at QC_CONCURRENCY=4: the agent runs' pollers and timers are counted as it starts them.
    const before = new Set(ctx.jobs!.workers().map((w) => w.id));
    const intervals = vi.spyOn(globalThis, 'setInterval');
    let workers: { stop(): void } | undefined;
    try {
      workers = await registerWorkers(ctx);
      const started = ctx.jobs!.workers().filter((w) => !before.has(w.id));
      const agentQueues = started.filter((w) => /advance/.test(w.queue) && !w.queue.startsWith('qc-'));
      expect(new Set(agentQueues.map((w) => w.queue))).toEqual(new Set([advanceAgentRunQueue.name]));
      expect(agentQueues).toHaveLength(4);
      expect(started.filter((w) => w.queue === 'consult-advance' || w.queue === 'staged-advance')).toEqual([]);
      // Two sweeps in all: the QC task runs' and the agent runs' (three agent families used to add three).
      expect(intervals.mock.calls.filter(([, ms]) => ms === SWEEP_INTERVAL_MS)).toHaveLength(2);
    } finally {
      intervals.mockRestore();
    }
    try {
      // The first sweep ran as the workers started: each run was noted as recovered and queued on the one queue.
      const recovered = await ctx.db.select({ entityId: auditLog.entityId }).from(auditLog).where(and(eq(auditLog.entityType, 'agent_run'), eq(auditLog.action, 'recovered'), inArray(auditLog.entityId, ids)));
      expect(recovered.map((r) => r.entityId).sort()).toEqual([...ids].sort());
      const done = await waitFor(async () => {
        const rows = await ctx.db.select().from(agentRuns).where(inArray(agentRuns.id, ids)).orderBy(asc(agentRuns.createdAt));
        return rows.every((row) => row.status === 'SUSPENDED' && row.leaseOwner === null) && rows;
      }, 'the three runs to be advanced by the host', 30_000, 50);
      const byId = new Map(done.map((row) => [row.id, row]));
      expect(ctx.consult.runs.stateOf(byId.get(consultRun.id)!).lastReply?.response).toContain('How long have you had the rash?');
      expect(ctx.stagedAgents.runs.stateOf(byId.get(staged.run.id)!).context.scientificQuestion).toEqual({ question: 'Does exercise reduce falls in adults over 70?' });
      expect(byId.get(definitionRun.id)!.reviewRequest).toMatchObject({ awaiting: 'answer', prompt: INTAKE_QUESTION });
      expect(byId.get(definitionRun.id)!.currentNode).toBe(TURN_NODE);
      // Each run's step ran once: three model calls, and a second sweep finds nothing left.
      expect(model.requests).toHaveLength(3);
      expect(await ctx.agentRunHost.sweep(1000)).toBe(0);
    } finally {
      workers?.stop();
    }
  });

  it("routes a job by the run's kind, and ends the step of a run whose stored state or input its family cannot read, saying why, with no model call", async () => {
    const calls = model.requests.length;
    const rowOf = async (id: string) => (await ctx.db.select().from(agentRuns).where(eq(agentRuns.id, id)))[0]!;
    const [broken] = await ctx.db.insert(agentRuns).values({ kind: 'agent:test-intake', userId: owner.id, status: 'PENDING', currentNode: TURN_NODE, state: { input: 'I have a cough.', messages: 'not a list' } }).returning();
    await ctx.agentRunHost.advance(broken!.id);
    expect(await rowOf(broken!.id)).toMatchObject({ status: 'FAILED', error: expect.stringContaining('messages') });

    const consult = await ctx.consult.start(owner, { title: 'Odd input' });
    const { run } = await ctx.consult.get(owner, consult.sessionId);
    await ctx.consult.runs.store.decide(ctx.db, run.id, { kind: 'answer', actor: owner.id, input: { text: 42 } });
    await ctx.agentRunHost.advance(run.id);
    const after = await rowOf(run.id);
    expect(after.status).toBe('SUSPENDED');
    expect(ctx.consult.runs.stateOf(after).lastError).toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('a fault on our side') });

    // A kind no family here runs is left as it is, for the process that runs it.
    const [foreign] = await ctx.db.insert(agentRuns).values({ kind: 'elsewhere:agent', status: 'PENDING', currentNode: 'start' }).returning();
    await ctx.agentRunHost.advance(foreign!.id);
    expect(await rowOf(foreign!.id)).toMatchObject({ status: 'PENDING', leaseOwner: null });
    expect(model.requests).toHaveLength(calls);
  });
});
