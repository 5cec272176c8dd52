import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentRuns } from '../../core/db/schema/runs.js';
import { ClinAgentError } from '../../core/errors.js';
import { defineQueue } from '../../core/jobs/queues.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import type { Db } from '../../core/db/connect.js';
import { createRunStore } from './run-store.js';
import { createStepDriver, type NodeHandlers } from './step-driver.js';

type AgentRun = typeof agentRuns.$inferSelect;
type AgentStepWrites = { state?: Record<string, unknown> };

const queue = defineQueue('test-driver-advance', z.object({ runId: z.string().uuid() }));
let version = 1;
/** Decisions are bound to `version`; a decision after it changed makes the run redo its work from `check`. */
const store = createRunStore<typeof agentRuns, AgentStepWrites>(agentRuns, { label: 'Driver test run', scope: eq(agentRuns.kind, 'test-driver'), reviewFingerprint: async () => String(version), redoFrom: () => 'check' });

/** A new run of the test kind, PENDING at `startNode`. */
async function createRun(db: Db, startNode: string): Promise<AgentRun> {
  const [row] = await db.insert(agentRuns).values({ kind: 'test-driver', status: 'PENDING', currentNode: startNode }).returning();
  return row!;
}

/** check -> ask (waits for approval) -> end_done; `loop` goes round forever. */
const handlers: NodeHandlers<AgentRun, AgentStepWrites, undefined> = {
  async execute(_run, node) {
    if (node === 'check') return { step: { type: 'check', outcome: 'pass', next: 'ask' }, update: { nextNode: 'ask', status: 'RUNNING' } };
    if (node === 'ask') return { step: { type: 'ask', outcome: 'suspended' }, update: { nextNode: 'ask', status: 'SUSPENDED', onApprove: 'end_done', onReject: 'end_error', reviewRequest: { awaiting: 'decision' } } };
    if (node === 'loop') return { step: { type: 'loop', outcome: 'pass', next: 'loop' }, update: { nextNode: 'loop', status: 'RUNNING' } };
    throw new ClinAgentError('LLM_RATE_LIMITED', 'the model is rate limited', { retryAfterMs: 1000 });
  },
};

describe.each(testEngines())('the step driver on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let driver: ReturnType<typeof createStepDriver<AgentRun, AgentStepWrites, object, 'runId'>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine, startJobs: true });
    driver = createStepDriver({ store, db: ctx.db, logger: ctx.logger, workerId: 'test-worker', queue, key: 'runId', jobs: ctx.jobs, maxNodesPerAdvance: 5, modelOutage: { attempts: 3, firstDelayMs: 500 } });
  });
  afterAll(async () => ctx?.close());

  it('runs nodes to a suspension, and decide queues the continuation that ends the run', async () => {
    const created = await createRun(ctx.db, 'check');
    expect(await driver.advance(created.id, handlers)).toMatchObject({ status: 'SUSPENDED', currentNode: 'ask', leaseOwner: null });
    expect(await driver.advance(created.id, handlers)).toBeUndefined();
    await driver.decide(created.id, { kind: 'approve', actor: 'dm' });
    expect(await ctx.jobs!.isQueued(queue, 'runId', [created.id])).toEqual(new Set([created.id]));
    const done = await driver.advance(created.id, handlers);
    expect(done).toMatchObject({ status: 'COMPLETED', currentNode: 'end_done' });
    expect(done!.steps.map((s) => `${String(s.node)}:${String(s.outcome)}`)).toEqual(['check:pass', 'ask:suspended', 'review:approve', 'end_done:pass']);
  });

  it('queues the redo itself when a decision is refused because the data changed', async () => {
    const created = await createRun(ctx.db, 'check');
    await driver.advance(created.id, handlers);
    version++;
    await expect(driver.decide(created.id, { kind: 'approve', actor: 'dm' })).rejects.toMatchObject({ code: 'CONFLICT_STATE', details: { redo: true } });
    expect(await ctx.jobs!.isQueued(queue, 'runId', [created.id])).toEqual(new Set([created.id]));
    expect(await driver.advance(created.id, handlers)).toMatchObject({ status: 'SUSPENDED', currentNode: 'ask' });
  });

  it('fails a run that passes the node cap in one advance', async () => {
    const created = await createRun(ctx.db, 'loop');
    const failed = await driver.advance(created.id, handlers);
    expect(failed).toMatchObject({ status: 'FAILED', currentNode: 'end_error', error: expect.stringMatching(/more than 5 nodes/) });
    expect(failed!.steps).toHaveLength(6);
  });

  it('waits out a rate limit: each attempt is a step, the run goes back to PENDING with its next attempt queued later, then fails saying the model was unavailable', async () => {
    const created = await createRun(ctx.db, 'limited');
    const first = await driver.advance(created.id, handlers);
    // The endpoint's retry-after (1 s) is longer than the first delay (0.5 s), so it wins.
    expect(first).toMatchObject({ status: 'PENDING', currentNode: 'limited', leaseOwner: null, leaseUntil: null, steps: [{ node: 'limited', type: 'model_unavailable', outcome: 'error', detail: { code: 'LLM_RATE_LIMITED', attempt: 1, retryInMs: 1000 } }] });
    expect(first!.error).toMatch(/^Waiting for the model, which was unavailable \(attempt 1 of 3; the next in about 1 s\): the model is rate limited/);
    expect(await ctx.jobs!.isQueued(queue, 'runId', [created.id])).toEqual(new Set([created.id]));

    expect(await driver.advance(created.id, handlers)).toMatchObject({ status: 'PENDING', steps: [{ detail: { attempt: 1 } }, { detail: { attempt: 2, retryInMs: 1000 } }] });
    const failed = await driver.advance(created.id, handlers);
    expect(failed).toMatchObject({ status: 'FAILED', currentNode: 'end_error', error: expect.stringMatching(/^Not done: the model was unavailable on all 3 attempts \(the model is rate limited\)\. Run it again once the model is back\.$/) });
    expect(failed!.steps).toHaveLength(3);
  });

  it('without job queues, gives the lease back on a rate limit and rethrows, so the caller retries', async () => {
    const bare = createStepDriver({ store, db: ctx.db, logger: ctx.logger, workerId: 'test-worker', queue, key: 'runId' });
    const created = await createRun(ctx.db, 'limited');
    await expect(bare.advance(created.id, handlers)).rejects.toMatchObject({ code: 'LLM_RATE_LIMITED' });
    expect(await store.get(ctx.db, created.id)).toMatchObject({ status: 'RUNNING', leaseOwner: null, leaseUntil: null, steps: [] });
  });

  it('stops without saving when another worker took the run over mid-node', async () => {
    const created = await createRun(ctx.db, 'check');
    const stolen = await driver.advance(created.id, {
      async execute(run, node) {
        await ctx.db.update(agentRuns).set({ leaseOwner: 'another-worker' }).where(eq(agentRuns.id, run.id));
        return handlers.execute(run, node, undefined);
      },
    });
    expect(stolen).toBeUndefined();
    expect(await store.get(ctx.db, created.id)).toMatchObject({ status: 'RUNNING', currentNode: 'check', leaseOwner: 'another-worker', steps: [] });
  });
});
