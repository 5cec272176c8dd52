import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openDatabase, type Database, type Db } from '../../core/db/connect.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { defineQueue } from '../../core/jobs/queues.js';
import { buildTestContext } from '../../testing/test-context.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY, testEngines } from '../../testing/test-database.js';
import { createAgentRunStore, type AgentRun } from './agent-runs.js';

/**
 * A test agent on the generic run store, shaped like the consultation agent to come: it triages a case, asks the
 * person a question and waits for the answer, then concludes with it. What the person is shown (the case) is
 * bound to the answer: an answer given after the case changed is refused.
 */
const consult = createAgentRunStore({
  kind: 'test-consult',
  label: 'Consult',
  reviewFingerprint: async (_tx, run) => JSON.stringify(run.state.case ?? null),
  describeReviewedData: () => 'the case',
});

const QUESTION = 'How long has the lesion been there, and has it changed?';

async function advanceConsult(db: Db, runId: string, owner = 'consult-worker'): Promise<AgentRun | undefined> {
  let run = await consult.acquireLease(db, runId, owner);
  while (run?.status === 'RUNNING') {
    const at = new Date().toISOString();
    const node = run.currentNode;
    const state = run.state;
    if (node === 'triage') {
      const summary = `lesion: ${(state.case as { lesion: string }).lesion}`;
      run = await consult.commitStep(db, run, owner, { node, type: 'think', at, outcome: 'pass', next: 'ask' }, { nextNode: 'ask', status: 'RUNNING', state: { ...state, summary } });
    } else if (node === 'ask') {
      run = await consult.commitStep(db, run, owner, { node, type: 'ask_person', at, outcome: 'suspended' }, { nextNode: 'ask', status: 'SUSPENDED', onApprove: 'conclude', reviewRequest: { awaiting: 'answer', question: QUESTION } });
    } else {
      const advice = `${String(state.summary)}; present ${String(run.review?.answer)}: see a dermatologist`;
      run = await consult.commitStep(db, run, owner, { node, type: 'respond', at, outcome: 'pass' }, { nextNode: 'end', status: 'COMPLETED', state: { ...state, advice } });
    }
  }
  return run;
}

describe.each(testEngines())('a durable agent run waiting for an answer on %s', (engine) => {
  let dataDir: string | undefined;
  let throwaway: { url: string; drop(): Promise<void> } | undefined;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  /** The same database every time: a PGlite data folder, or one throwaway PostgreSQL database. */
  async function openSameDatabase(): Promise<Database> {
    return dataDir ? openDatabase({ dataDir, auditKey: TEST_AUDIT_KEY }) : openDatabase({ databaseUrl: throwaway!.url, poolSize: 4, auditKey: TEST_AUDIT_KEY });
  }

  beforeAll(async () => {
    if (engine === 'pglite') dataDir = mkdtempSync(path.join(tmpdir(), 'clinagent-agent-runs-'));
    else throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
    ctx = await buildTestContext({ database: await openSameDatabase(), startJobs: true });
  });

  afterAll(async () => {
    await ctx?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await throwaway?.drop();
  });

  it('survives a restart while it waits, then resumes with the answer and completes', async () => {
    const created = await consult.create(ctx.db, { startNode: 'triage', state: { case: { lesion: 'pigmented, 6 mm, irregular border' } } });
    const waiting = await advanceConsult(ctx.db, created.id);
    expect(waiting).toMatchObject({ status: 'SUSPENDED', currentNode: 'ask', leaseOwner: null, state: { summary: 'lesion: pigmented, 6 mm, irregular border' } });
    expect(waiting!.reviewRequest).toMatchObject({ awaiting: 'answer', question: QUESTION, dataHash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    // The server stops while the consult waits, and starts again on the same database.
    await ctx.close();
    ctx = await buildTestContext({ database: await openSameDatabase(), startJobs: true });

    expect(await consult.get(ctx.db, created.id)).toMatchObject({ status: 'SUSPENDED', currentNode: 'ask', reviewRequest: waiting!.reviewRequest });
    // Advancing a waiting run does nothing; approving one that waits for an answer is refused.
    expect(await advanceConsult(ctx.db, created.id)).toBeUndefined();
    await expect(consult.decide(ctx.db, created.id, { kind: 'approve', actor: 'patient-7' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/waits for an answer/) });
    await expect(consult.decide(ctx.db, created.id, { kind: 'answer', actor: 'patient-7', answer: '  ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'answer' } });

    const resumed = await consult.decide(ctx.db, created.id, { kind: 'answer', actor: 'patient-7', answer: 'three months, growing' });
    expect(resumed).toMatchObject({ status: 'RUNNING', currentNode: 'conclude', review: { reviewer: 'patient-7', decision: 'answer', answer: 'three months, growing' } });
    await expect(consult.decide(ctx.db, created.id, { kind: 'answer', actor: 'patient-7', answer: 'again' })).rejects.toMatchObject({ code: 'CONFLICT_STATE' });

    const done = await advanceConsult(ctx.db, created.id);
    expect(done).toMatchObject({ status: 'COMPLETED', currentNode: 'end', state: { advice: 'lesion: pigmented, 6 mm, irregular border; present three months, growing: see a dermatologist' } });
    expect(done!.steps.map((s) => `${String(s.node)}:${String(s.outcome)}`)).toEqual(['triage:pass', 'ask:suspended', 'review:answer', 'conclude:pass']);
  });

  it('refuses an answer to a case that changed while it waited, and takes the answer given to the case as it is', async () => {
    const created = await consult.create(ctx.db, { startNode: 'triage', state: { case: { lesion: 'red patch, 2 cm' } } });
    const waiting = (await advanceConsult(ctx.db, created.id))!;
    // The person adds to the case after the question was shown.
    await ctx.db.update(agentRuns).set({ state: { ...waiting.state, case: { lesion: 'red patch, 2 cm, now bleeding' } } }).where(eq(agentRuns.id, created.id));

    const refused = consult.decide(ctx.db, created.id, { kind: 'answer', actor: 'patient-8', answer: 'two weeks' });
    await expect(refused).rejects.toMatchObject({ code: 'CONFLICT_STATE', status: 409, details: { runId: created.id, reason: 'review_data_changed' } });
    await expect(refused).rejects.toThrow(/the case changed after the review was shown.*answer was not applied.*fresh review/);
    const stillWaiting = (await consult.get(ctx.db, created.id))!;
    expect(stillWaiting).toMatchObject({ status: 'SUSPENDED', currentNode: 'ask', review: null });
    expect(stillWaiting.reviewRequest!.dataHash).not.toBe(waiting.reviewRequest!.dataHash);

    await consult.decide(ctx.db, created.id, { kind: 'answer', actor: 'patient-8', answer: 'two weeks' });
    expect(await advanceConsult(ctx.db, created.id)).toMatchObject({ status: 'COMPLETED' });
  });

  it('picks up a run whose worker died through the sweep, and leaves other agents\u2019 runs to their own store', async () => {
    const queue = defineQueue('test-consult-advance', z.object({ runId: z.string().uuid() }));
    const created = await consult.create(ctx.db, { startNode: 'triage', state: { case: { lesion: 'mole' } } });
    const other = await createAgentRunStore({ kind: 'test-protocol-stage', label: 'Protocol stage' }).create(ctx.db, { startNode: 'draft' });
    // Both taken by a worker that died: RUNNING, lease lapsed, untouched for a while.
    const past = new Date(Date.now() - 60_000);
    for (const id of [created.id, other.id]) await ctx.db.update(agentRuns).set({ status: 'RUNNING', leaseOwner: 'dead', leaseUntil: past, updatedAt: past }).where(eq(agentRuns.id, id));

    const orphans = await consult.sweepOrphans(ctx.db, { jobs: ctx.jobs!, queue, key: 'runId', staleMs: 10_000 });

    expect(orphans).toEqual([{ id: created.id, abandoned: true }]);
    expect(await ctx.jobs!.isQueued(queue, 'runId', [created.id, other.id])).toEqual(new Set([created.id]));
    expect((await consult.get(ctx.db, created.id))!.recoveredAt).not.toBeNull();
    expect(await consult.get(ctx.db, other.id)).toBeUndefined();
    expect(await advanceConsult(ctx.db, created.id)).toMatchObject({ status: 'SUSPENDED', recoveredAt: null });
  });
});
