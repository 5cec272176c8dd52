import { randomBytes } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { createLogger } from '../logger.js';
import { createJobs, type Jobs } from './boss.js';
import { pgliteExecuteSql } from './pglite-adapter.js';
import { defineQueue, type QueueDef } from './queues.js';
import { waitFor } from '../../testing/wait-for.js';

/** pg-boss 10's minimum; throughput and test speed are both set by it. */
const POLLING_INTERVAL_SECONDS = 0.5;

const visitPayload = z.object({ subjectId: z.string().trim().min(1), visit: z.number().int() });
type VisitPayload = z.infer<typeof visitPayload>;

/** A fresh queue name per test, so one test's jobs and workers never reach another's. */
function visitQueue(options: { retryLimit?: number } = {}): QueueDef<VisitPayload> {
  return defineQueue(`test-visit-${randomBytes(4).toString('hex')}`, visitPayload, options);
}

describe.each(testEngines())('createJobs on %s', (engine) => {
  let database: Database;
  let jobs: Jobs;
  const workerIds: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    jobs = await createJobs(database, createLogger('silent'));
  });

  afterAll(async () => {
    await jobs?.stop();
    await database?.close();
  });

  async function work<T>(queue: QueueDef<T>, handler: (data: T, job: PgBoss.Job<T>) => Promise<void>, batchSize = 1): Promise<void> {
    workerIds.push(await jobs.work(queue, handler, { batchSize, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }));
  }

  async function stateOf(queue: QueueDef<unknown>, id: string) {
    return jobs.boss.getJobById(queue.name, id);
  }

  async function settled(queue: QueueDef<unknown>, id: string) {
    const job = await stateOf(queue, id);
    return job && (job.state === 'completed' || job.state === 'failed') ? job : undefined;
  }

  it('hands a sent job to its worker with the payload as the queue schema parsed it', async () => {
    const queue = visitQueue();
    const handled: Array<{ data: VisitPayload; id: string }> = [];
    await work(queue, async (data, job) => {
      handled.push({ data, id: job.id });
    });

    const id = await jobs.send(queue, { subjectId: '  S-001 ', visit: 2 });

    expect(id).toEqual(expect.any(String));
    const job = await waitFor(() => settled(queue as QueueDef<unknown>, id!), 'the job to complete');
    expect(job.state).toBe('completed');
    expect(handled).toEqual([{ data: { subjectId: 'S-001', visit: 2 }, id }]);
  });

  it('refuses to send a payload that fails the queue schema, naming the field', async () => {
    const queue = visitQueue();

    const sending = jobs.send(queue, { subjectId: 'S-001', visit: 'two' } as unknown as VisitPayload);

    await expect(sending).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/^visit: /m), details: { queue: queue.name } });
    // Nothing reached the database: the queue was not even created for the bad payload.
    expect(await jobs.boss.getQueue(queue.name)).toBeNull();
  });

  it('fails only the job whose handler throws and completes the rest of its batch once each', async () => {
    // With one retry, a batch failed as a whole would hand the four good jobs over a second time.
    const queue = visitQueue({ retryLimit: 1 });
    const ids: string[] = [];
    for (let visit = 1; visit <= 5; visit++) ids.push((await jobs.send(queue, { subjectId: 'S-002', visit }))!);
    const handledVisits: number[] = [];

    // Sent before the worker starts, so its first fetch takes all five as one batch.
    await work(
      queue,
      async ({ visit }) => {
        handledVisits.push(visit);
        if (visit === 3) throw new Error('visit 3: site EDC unreachable');
      },
      10,
    );

    const settledJobs = await Promise.all(ids.map((id) => waitFor(() => settled(queue as QueueDef<unknown>, id), `job ${id} to settle`)));
    expect(settledJobs.map((job) => job.state)).toEqual(['completed', 'completed', 'failed', 'completed', 'completed']);
    expect(settledJobs[2]!.output).toMatchObject({ message: 'visit 3: site EDC unreachable' });
    expect(handledVisits.sort()).toEqual([1, 2, 3, 3, 4, 5]);
  });

  it('leaves a job failed when its retry, running in another worker, fails while the first batch is still busy', async () => {
    // pg-boss completes every job of a batch once the batch handler returns. A job failed early in a slow
    // batch would be retried 1-2 s later; if another worker held that retry when the batch ended, the blanket
    // completion would mark it completed, whatever the retry's own outcome. So a job of a batch is failed (and
    // so retried) only once the batch is done: while the batch is busy, its failed job is still active.
    const queue = visitQueue({ retryLimit: 1 });
    const sent = [(await jobs.send(queue, { subjectId: 'S-006', visit: 1 }))!, (await jobs.send(queue, { subjectId: 'S-006', visit: 2 }))!];
    // pg-boss hands a batch over in no fixed order: the first job handled is the one that fails, twice.
    let failing: string | undefined;
    let attemptsOfFailing = 0;
    const failingDuringBatch: Array<string | undefined> = [];
    const handler = async (_visit: VisitPayload, job: PgBoss.Job<VisitPayload>): Promise<void> => {
      if (failing === undefined) failing = job.id;
      if (job.id === failing) throw new Error(`attempt ${++attemptsOfFailing} failed`);
      failingDuringBatch.push((await stateOf(queue as QueueDef<unknown>, failing))?.state);
    };

    await work(queue, handler, 2);
    await waitFor(async () => failing, 'the batch worker to take both jobs');
    await work(queue, handler, 1);

    const [failingJob, otherJob] = await Promise.all([failing!, sent.find((id) => id !== failing)!].map((id) => waitFor(() => settled(queue as QueueDef<unknown>, id), `job ${id} to settle`, 30_000)));
    expect(failingDuringBatch).toEqual(['active']);
    expect(otherJob!.state).toBe('completed');
    expect(failingJob!.state).toBe('failed');
    expect(failingJob!.output).toMatchObject({ message: 'attempt 2 failed' });
    expect(attemptsOfFailing).toBe(2);
  });

  it('sends many jobs at once with the queue retry policy, and none when one payload is bad', async () => {
    const queue = visitQueue({ retryLimit: 4 });
    await expect(jobs.sendMany(queue, [{ subjectId: 'S-010', visit: 1 }, { subjectId: '', visit: 2 }])).rejects.toMatchObject({
      code: 'VALIDATION_FAILED', message: expect.stringMatching(/^Job 2 of 2 .*\nsubjectId: /), details: { queue: queue.name },
    });

    await jobs.sendMany(queue, [{ subjectId: ' S-010', visit: 1 }, { subjectId: 'S-011', visit: 1 }]);
    // A singleton key skips a payload that already has a job in the current slot.
    await jobs.sendMany(queue, [{ subjectId: 'S-012', visit: 1 }, { subjectId: 'S-012', visit: 2 }], { singletonKey: (p) => p.subjectId, singletonSeconds: 60 });

    const handled: VisitPayload[] = [];
    const ids: string[] = [];
    await work(queue, async (data, job) => {
      handled.push(data);
      ids.push(job.id);
    }, 10);
    await waitFor(async () => handled.length === 3, 'the three jobs to be handled');
    expect(handled.map((p) => p.subjectId).sort()).toEqual(['S-010', 'S-011', 'S-012']);
    const sent = await Promise.all(ids.map((id) => stateOf(queue as QueueDef<unknown>, id)));
    expect(sent.map((job) => job?.retryLimit)).toEqual([4, 4, 4]);
  });

  it('says which payload keys have a job waiting in a queue, not ones being worked on or done', async () => {
    const queue = visitQueue();
    const other = visitQueue();
    await jobs.sendMany(queue, [{ subjectId: 'S-020', visit: 1 }, { subjectId: 'S-021', visit: 1 }]);
    await jobs.send(other, { subjectId: 'S-022', visit: 1 });
    expect(await jobs.isQueued(queue, 'subjectId', ['S-020', 'S-021', 'S-022', 'S-023'])).toEqual(new Set(['S-020', 'S-021']));

    const busy = new Set<string>();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await work(queue, async ({ subjectId }) => {
      busy.add(subjectId);
      await released;
    }, 10);
    // One fetch takes both jobs; the worker handles them in turn, so the first one holds the batch.
    await waitFor(async () => busy.size === 1, 'the worker to take both jobs');
    expect(await jobs.isQueued(queue, 'subjectId', ['S-020', 'S-021'])).toEqual(new Set());
    release();
    expect(await jobs.isQueued(queue, 'subjectId', [])).toEqual(new Set());
  });

  it('schedules a queue with a cron expression in UTC, checking the payload first', async () => {
    const queue = visitQueue();
    await expect(jobs.schedule(queue, '0 6 * * 1', { subjectId: 'S-030' } as unknown as VisitPayload)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });

    await jobs.schedule(queue, '0 6 * * 1', { subjectId: 'S-030', visit: 1 });
    await jobs.schedule(queue, '30 7 * * *', { subjectId: 'S-030', visit: 2 });

    expect((await jobs.schedules()).filter((s) => s.queue === queue.name)).toEqual([{ queue: queue.name, cron: '30 7 * * *', data: { subjectId: 'S-030', visit: 2 }, tz: 'UTC' }]);
  });

  it('retries a failing job retryLimit times, then leaves it failed with the last error', async () => {
    const queue = visitQueue({ retryLimit: 2 });
    let attempts = 0;
    await work(queue, async () => {
      attempts++;
      throw new Error(`attempt ${attempts}: site EDC unreachable`);
    });

    const id = (await jobs.send(queue, { subjectId: 'S-003', visit: 1 }))!;

    // pg-boss backs off 1-2 s, then 2-4 s, between the attempts.
    const job = await waitFor(() => settled(queue as QueueDef<unknown>, id), 'the job to fail for good', 30_000);
    expect(job.state).toBe('failed');
    expect(job.retryCount).toBe(2);
    expect(attempts).toBe(3);
    expect(job.output).toMatchObject({ message: 'attempt 3: site EDC unreachable' });
  });

  if (engine === 'postgres') {
    it('lets two processes create the same queue at once without failing either', async () => {
      // A second pg-boss instance has its own connections, like a second worker process.
      const other = await createJobs(database, createLogger('silent'), { supervise: false, schedule: false });
      try {
        for (let i = 0; i < 8; i++) {
          const queue = visitQueue();
          const ids = await Promise.all([jobs.send(queue, { subjectId: 'S-1', visit: i }), other.send(queue, { subjectId: 'S-2', visit: i })]);
          expect(ids.every((id) => typeof id === 'string')).toBe(true);
        }
      } finally {
        await other.stop();
      }
    });
  }

  // Transactions shared with pg-boss exist only on the single PGlite connection.
  if (engine === 'pglite') {
  it('rolls a job sent inside a PGlite transaction back with that transaction (PGlite only)', async () => {
    const queue = visitQueue();
    const kept = (await jobs.send(queue, { subjectId: 'S-004', visit: 1 }))!;
    let rolledBack: string | null = null;

    const transaction = database.pglite!.transaction(async (tx) => {
      rolledBack = await jobs.send(queue, { subjectId: 'S-004', visit: 2 }, { db: pgliteExecuteSql(tx) });
      throw new Error('the application write failed');
    });

    await expect(transaction).rejects.toThrow('the application write failed');
    expect(rolledBack).toEqual(expect.any(String));
    expect(await stateOf(queue as QueueDef<unknown>, rolledBack!)).toBeNull();
    expect(await stateOf(queue as QueueDef<unknown>, kept)).toMatchObject({ state: 'created' });
  });

  it('commits a job sent inside a PGlite transaction with that transaction (PGlite only)', async () => {
    // A queue no job was sent to yet: the queue has to be created inside the caller's transaction too.
    const queue = visitQueue();

    const id = await database.pglite!.transaction(async (tx) => jobs.send(queue, { subjectId: 'S-005', visit: 1 }, { db: pgliteExecuteSql(tx) }));

    expect(await stateOf(queue as QueueDef<unknown>, id!)).toMatchObject({ state: 'created', data: { subjectId: 'S-005', visit: 1 } });
  });
  }
});
