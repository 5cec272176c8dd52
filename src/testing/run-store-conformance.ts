import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunStep } from '../runtime/runs/run-shape.js';
import type { RunStore, RunUpdate } from '../runtime/runs/run-store.js';
import type { Db } from '../core/db/connect.js';
import { ClinAgentError } from '../core/errors.js';
import type { Jobs } from '../core/jobs/boss.js';
import { defineQueue } from '../core/jobs/queues.js';
import { testEngines } from './test-database.js';

/** The run columns the specification reads; every run table has them. */
interface ConformanceRow {
  id: string;
  status: string;
  currentNode: string;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  recoveredAt: Date | null;
  completedAt: Date | null;
  steps: unknown[];
  review: unknown;
}

/** A store opened on a fresh database of one engine, with what the specification needs around it. */
interface RunStoreSubject<Row extends ConformanceRow, Extra, DecisionExtra> {
  store: RunStore<Row, Extra, DecisionExtra>;
  db: Db;
  jobs: Jobs;
  /** A new run of this store, PENDING at `node`. */
  createRun(node: string): Promise<Row>;
  /** A PENDING run in the same table that this store must not see (another kind); absent for a table of its own. */
  createForeignRun?(node: string): Promise<{ id: string }>;
  /** What a decision carries besides the decision itself (a task run's `onRejectQueries`). */
  decisionExtra: DecisionExtra;
  close(): Promise<void>;
}

/**
 * How a backend joins the specification: a name, and how to open its store on a database of each engine (the
 * langgraphjs checkpointer validation shape: one spec, one initializer per backend).
 */
interface RunStoreInitializer<Row extends ConformanceRow, Extra, DecisionExtra> {
  name: string;
  /** False for a store whose steps save columns of their own, which commits steps one by one only. */
  batchCommits: boolean;
  /** True for a store over a table it shares with other stores (agent_runs, by kind): it must see only its own runs. */
  sharedTable: boolean;
  open(engine: 'pglite' | 'postgres'): Promise<RunStoreSubject<Row, Extra, DecisionExtra>>;
}

/** Where the specification's sweeps queue the runs they find; nobody works on it. */
const conformanceQueue = defineQueue('run-store-conformance', z.object({ runId: z.string().uuid() }));

const OWNER = 'conformance-worker#a';
const OTHER = 'conformance-worker#b';
const LEASE_MS = 1_000;

/**
 * The RunStore contract as one specification, run for a store on both database engines: a lease is taken by one
 * owner at a time and can be taken over only once it lapsed; a step commits only for the owner at its node; a
 * decision applies once; cancel stops a run in flight; the sweep finds runs nobody advances; an ended run stays
 * ended. Time is passed in (`now`), never waited for.
 */
export function describeRunStoreConformance<Row extends ConformanceRow, Extra, DecisionExtra>(init: RunStoreInitializer<Row, Extra, DecisionExtra>): void {
  describe.each(testEngines())(`${init.name} keeps the RunStore contract on %s`, (engine) => {
    let subject: RunStoreSubject<Row, Extra, DecisionExtra>;
    beforeAll(async () => {
      subject = await init.open(engine);
    });
    afterAll(async () => {
      await subject?.close();
    });

    const step = (node: string, type = 'check'): RunStep => ({ node, type, at: new Date().toISOString(), outcome: 'pass' });
    const update = (value: RunUpdate): RunUpdate & Extra => value as RunUpdate & Extra;
    const conflictOf = (error: unknown) => (ClinAgentError.isInstance(error) ? error.code : String(error));

    /** A run this owner holds at `node`. */
    async function leased(node = 'start', owner = OWNER, now = new Date()): Promise<Row> {
      const run = await subject.createRun(node);
      const taken = await subject.store.acquireLease(subject.db, run.id, owner, LEASE_MS, now);
      expect(taken).toMatchObject({ status: 'RUNNING', leaseOwner: owner });
      return taken!;
    }

    /** A run suspended at `ask`, waiting for `awaiting`; approve goes to `approved`, reject to `rejected`. */
    async function suspended(awaiting: 'decision' | 'answer' = 'decision'): Promise<Row> {
      const run = await leased('ask');
      const saved = await subject.store.commitStep(subject.db, run, OWNER, step('ask', 'ask_person'), update({ nextNode: 'ask', status: 'SUSPENDED', onApprove: 'approved', onReject: 'rejected', reviewRequest: { awaiting } }));
      expect(saved).toMatchObject({ status: 'SUSPENDED', leaseOwner: null });
      return saved!;
    }

    it('gives a run to one owner at a time: of eight workers taking it at once, exactly one gets it', async () => {
      const run = await subject.createRun('start');
      const takers = Array.from({ length: 8 }, (_, i) => `conformance-worker#${i}`);
      const results = await Promise.all(takers.map((owner) => subject.store.acquireLease(subject.db, run.id, owner, LEASE_MS)));
      const winners = results.filter((row) => row !== undefined);
      expect(winners).toHaveLength(1);
      expect((await subject.store.get(subject.db, run.id))!.leaseOwner).toBe(winners[0]!.leaseOwner);
    });

    it('lets another worker take a run over only once its lease lapsed, and refuses the first owner after that', async () => {
      const start = new Date();
      const run = await leased('start', OWNER, start);
      expect(await subject.store.acquireLease(subject.db, run.id, OTHER, LEASE_MS, new Date(start.getTime() + LEASE_MS / 2))).toBeUndefined();
      const takenOver = await subject.store.acquireLease(subject.db, run.id, OTHER, LEASE_MS, new Date(start.getTime() + LEASE_MS * 2));
      expect(takenOver).toMatchObject({ status: 'RUNNING', leaseOwner: OTHER });
      // The first owner, back from a long pause, can neither renew nor save: its step is not the run's any more.
      expect(await subject.store.renewLease(subject.db, run.id, OWNER, LEASE_MS)).toBe(false);
      expect(await subject.store.commitStep(subject.db, run, OWNER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }))).toBeUndefined();
      const saved = await subject.store.commitStep(subject.db, takenOver!, OTHER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }));
      expect(saved).toMatchObject({ currentNode: 'next', leaseOwner: OTHER });
      expect(saved!.steps).toHaveLength(1);
    });

    it('saves a step only for the owner at the node it ran: a stranger, or a step of another node, is refused', async () => {
      const run = await leased('start');
      expect(await subject.store.commitStep(subject.db, run, OTHER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }))).toBeUndefined();
      expect(await subject.store.commitStep(subject.db, run, OWNER, step('elsewhere'), update({ nextNode: 'next', status: 'RUNNING' }))).toBeUndefined();
      const first = await subject.store.commitStep(subject.db, run, OWNER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }));
      // The same step again (a retried job) finds the run at its next node, and saves nothing twice.
      expect(await subject.store.commitStep(subject.db, run, OWNER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }))).toBeUndefined();
      expect((await subject.store.get(subject.db, first!.id))!.steps).toHaveLength(1);
    });

    it('keeps the checkpoint: a run given back resumes at its saved node with its steps, under its next owner', async () => {
      const run = await leased('start');
      const saved = await subject.store.commitStep(subject.db, run, OWNER, step('start'), update({ nextNode: 'middle', status: 'RUNNING' }));
      await subject.store.releaseLease(subject.db, saved!.id, OWNER);
      const resumed = await subject.store.acquireLease(subject.db, run.id, OTHER, LEASE_MS);
      expect(resumed).toMatchObject({ status: 'RUNNING', currentNode: 'middle', leaseOwner: OTHER });
      expect(resumed!.steps).toHaveLength(1);
    });

    it('applies a decision once: of two made at once one wins, the other is refused with the run as it now is', async () => {
      const run = await suspended();
      const decide = (actor: string) => subject.store.decide(subject.db, run.id, { kind: 'approve', actor, ...subject.decisionExtra } as never);
      const outcomes = await Promise.allSettled([decide('reviewer-1'), decide('reviewer-2')]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(refused.map((o) => conflictOf(o.reason))).toEqual(['CONFLICT_STATE']);
      const after = (await subject.store.get(subject.db, run.id))!;
      expect(after).toMatchObject({ status: 'RUNNING', currentNode: 'approved', leaseOwner: null });
      expect(after.review).toMatchObject({ decision: 'approve' });
    });

    it('takes the kind of decision the run waits for: an answer where it waits for one, never approve', async () => {
      const run = await suspended('answer');
      await expect(subject.store.decide(subject.db, run.id, { kind: 'approve', actor: 'reviewer', ...subject.decisionExtra } as never)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      const answered = await subject.store.decide(subject.db, run.id, { kind: 'answer', actor: 'reviewer', answer: 'three weeks', ...subject.decisionExtra } as never);
      expect(answered).toMatchObject({ status: 'RUNNING', currentNode: 'approved' });
      expect(answered.review).toMatchObject({ decision: 'answer', answer: 'three weeks' });
    });

    it('cancels a run in flight: its worker can no longer save, and a second cancel is a conflict', async () => {
      const run = await leased('start');
      const cancelled = await subject.store.cancel(subject.db, run.id, 'coordinator', 'no longer needed');
      expect(cancelled).toMatchObject({ status: 'CANCELLED', leaseOwner: null });
      expect(cancelled.completedAt).toBeInstanceOf(Date);
      expect(await subject.store.commitStep(subject.db, run, OWNER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }))).toBeUndefined();
      await expect(subject.store.cancel(subject.db, run.id, 'coordinator')).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
    });

    it('keeps an ended run ended: a completed or failed run is not leased, saved, decided or cancelled', async () => {
      for (const status of ['COMPLETED', 'FAILED'] as const) {
        const run = await leased('end');
        const ended = await subject.store.commitStep(subject.db, run, OWNER, step('end', 'end'), update({ nextNode: 'end', status, error: status === 'FAILED' ? 'it failed' : undefined }));
        expect(ended).toMatchObject({ status, leaseOwner: null });
        expect(await subject.store.acquireLease(subject.db, run.id, OTHER, LEASE_MS, new Date(Date.now() + 60_000))).toBeUndefined();
        expect(await subject.store.commitStep(subject.db, ended!, OWNER, step('end', 'end'), update({ nextNode: 'end', status: 'RUNNING' }))).toBeUndefined();
        await expect(subject.store.decide(subject.db, run.id, { kind: 'approve', actor: 'reviewer', ...subject.decisionExtra } as never)).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
        await expect(subject.store.cancel(subject.db, run.id, 'coordinator')).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
        expect((await subject.store.get(subject.db, run.id))!.status).toBe(status);
      }
    });

    it("sweeps the runs nobody advances: a run whose worker died is noted as recovered, a lost job is queued again, once", async () => {
      const start = new Date();
      const abandoned = await leased('start', OWNER, start);
      const lost = await subject.createRun('start');
      const foreign = await subject.createForeignRun?.('start');
      // A minute on: the lease lapsed long ago and neither run was touched since.
      const options = { jobs: subject.jobs, queue: conformanceQueue, key: 'runId' as const, staleMs: 1_000, now: new Date(start.getTime() + 60_000) };
      const found = await subject.store.sweepOrphans(subject.db, options);
      expect(found.filter((o) => o.id === abandoned.id)).toEqual([{ id: abandoned.id, abandoned: true }]);
      expect(found.filter((o) => o.id === lost.id)).toEqual([{ id: lost.id, abandoned: false }]);
      if (foreign) expect(found.map((o) => o.id)).not.toContain(foreign.id);
      expect((await subject.store.get(subject.db, abandoned.id))!.recoveredAt).toBeInstanceOf(Date);
      expect(await subject.jobs.isQueued(conformanceQueue, 'runId', [abandoned.id, lost.id])).toEqual(new Set([abandoned.id, lost.id]));
      // The run whose job now waits is not queued again; a run in flight under a live lease is never taken.
      const liveSince = new Date();
      const live = await leased('start', OWNER, liveSince);
      const again = await subject.store.sweepOrphans(subject.db, { ...options, now: liveSince, staleMs: 0 });
      expect(again.map((o) => o.id)).not.toContain(lost.id);
      expect(again.map((o) => o.id)).not.toContain(live.id);
      // The next saved step of the recovered run clears the note.
      const resumed = await subject.store.acquireLease(subject.db, abandoned.id, OTHER, LEASE_MS, new Date(start.getTime() + 60_000));
      const saved = await subject.store.commitStep(subject.db, resumed!, OTHER, step('start'), update({ nextNode: 'next', status: 'RUNNING' }));
      expect(saved!.recoveredAt).toBeNull();
    });

    it('gives up the lease of a run it puts back to wait (PENDING, a model outage), one step or a batch at a time', async () => {
      const single = await leased('start');
      const waiting = await subject.store.commitStep(subject.db, single, OWNER, step('start', 'model_unavailable'), update({ nextNode: 'start', status: 'PENDING', error: 'waiting for the model' }));
      expect(waiting).toMatchObject({ status: 'PENDING', leaseOwner: null, leaseUntil: null });
      if (!init.batchCommits) return;
      const runs = await Promise.all([subject.createRun('start'), subject.createRun('start')]);
      const held = await subject.store.acquireLeases(subject.db, runs.map((r) => r.id), OWNER, LEASE_MS);
      const saved = await subject.store.commitSteps(subject.db, held.map((run) => ({ run, step: step('start', 'model_unavailable'), update: update({ nextNode: 'start', status: 'PENDING', error: 'waiting for the model' }) })), OWNER, LEASE_MS);
      expect(saved).toHaveLength(2);
      expect(saved.map((r) => [r.status, r.leaseOwner, r.leaseUntil])).toEqual([['PENDING', null, null], ['PENDING', null, null]]);
    });

    if (init.sharedTable) it('sees only its own runs in a shared table', async () => {
      const foreign = await subject.createForeignRun!('start');
      expect(await subject.store.get(subject.db, foreign.id)).toBeUndefined();
      expect(await subject.store.acquireLease(subject.db, foreign.id, OWNER, LEASE_MS)).toBeUndefined();
      await expect(subject.store.cancel(subject.db, foreign.id, 'coordinator')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    if (init.batchCommits) it('commits a batch of steps together, saving only the runs its owner still holds', async () => {
      const runs = await Promise.all([subject.createRun('start'), subject.createRun('start'), subject.createRun('start')]);
      const held = await subject.store.acquireLeases(subject.db, runs.map((r) => r.id), OWNER, LEASE_MS);
      expect(held).toHaveLength(3);
      // One of them is cancelled meanwhile: the batch saves the other two, in one go.
      await subject.store.cancel(subject.db, runs[2]!.id, 'coordinator');
      const saved = await subject.store.commitSteps(subject.db, held.map((run) => ({ run, step: step('start'), update: update({ nextNode: 'end', status: 'RUNNING' }) })), OWNER, LEASE_MS);
      expect(saved.map((r) => r.id).sort()).toEqual([runs[0]!.id, runs[1]!.id].sort());
      expect(saved.every((r) => r.currentNode === 'end' && r.steps.length === 1)).toBe(true);
      expect((await subject.store.get(subject.db, runs[2]!.id))!.status).toBe('CANCELLED');
    });
  });
}
