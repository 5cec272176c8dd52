import { desc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { spans, traces } from '../db/schema/trace.js';
import { createLogger } from '../logger.js';
import { ALL_TRACES, createTraceStore, type TraceStore } from './store.js';

describe.each(testEngines())('createTraceStore on %s', (engine) => {
  let database: Database;
  let store: TraceStore;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    store = createTraceStore(database.db);
  });

  afterAll(async () => {
    await store?.close();
    await database?.close();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  async function storedTrace(id: string) {
    const [row] = await database.db.select().from(traces).where(eq(traces.id, id));
    return row;
  }

  async function storedSpans(traceId: string) {
    return database.db.select().from(spans).where(eq(spans.traceId, traceId));
  }

  describe('recording', () => {
    it('writes a running trace within the scheduled delay, before any span is recorded', async () => {
      const quick = createTraceStore(database.db, { scheduledDelayMs: 10 });
      const run = await quick.start({ kind: 'agent', name: 'qc-check', input: { question: 'Which subjects miss consent?' } });

      // Polled, not timed: the writer's timer writes the row without anyone reading or finishing.
      const row = await vi.waitFor(async () => (await storedTrace(run.traceId)) ?? Promise.reject(new Error('not written yet')));
      expect(row).toMatchObject({ kind: 'agent', name: 'qc-check', status: 'running', input: { question: 'Which subjects miss consent?' }, endedAt: null });
      expect(await storedSpans(run.traceId)).toHaveLength(0);
      expect((await store.get(run.traceId, ALL_TRACES))?.status).toBe('running');
    });

    it('records spans in the order they ran, with their usage, and sums the tokens on finish', async () => {
      const run = await store.start({ kind: 'agent', name: 'ordered' });

      const first = await run.span('llm', 'qwen-plus', { prompt: 'one' }, async () => 'a', (content) => ({ output: { content }, usage: { promptTokens: 10, completionTokens: 3 } }));
      await run.span('tool', 'calculate_rate', { numerator: 1, denominator: 2 }, async () => ({ rate: 0.5 }));
      await run.span('llm', 'qwen-plus', { prompt: 'two' }, async () => 'b', (content) => ({ output: { content }, usage: { promptTokens: 20, completionTokens: 5 } }));
      await run.finish({ status: 'success', output: { answer: 'b' } });

      expect(first).toBe('a');
      const view = await store.get(run.traceId, ALL_TRACES);
      expect(view?.spans.map((s) => [s.kind, s.name, s.status])).toEqual([
        ['llm', 'qwen-plus', 'success'],
        ['tool', 'calculate_rate', 'success'],
        ['llm', 'qwen-plus', 'success'],
      ]);
      expect(view?.spans.map((s) => [s.promptTokens, s.completionTokens])).toEqual([
        [10, 3],
        [0, 0],
        [20, 5],
      ]);
      expect(view?.spans[1]).toMatchObject({ input: { numerator: 1, denominator: 2 }, output: { rate: 0.5 }, error: null });
      expect(view).toMatchObject({ status: 'success', output: { answer: 'b' }, promptTokens: 30, completionTokens: 8, error: null });
      expect(view?.endedAt).not.toBeNull();
    });

    it('keeps spans in start order when they start in the same millisecond', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2025-06-01T08:00:00.000Z'));
      const run = await store.start({ kind: 'agent', name: 'same-millisecond' });

      for (const name of ['first', 'second', 'third']) await run.span('step', name, {}, async () => name);
      // An outer step that ends after the inner one: its row is written last but it began first.
      let release!: () => void;
      const outer = run.span('step', 'outer', {}, () => new Promise<void>((resolve) => (release = resolve)));
      await run.span('step', 'inner', {}, async () => 'done');
      release();
      await outer;

      const view = await store.get(run.traceId, ALL_TRACES);
      expect(view?.spans.map((s) => s.name)).toEqual(['first', 'second', 'third', 'outer', 'inner']);
    });

    it('keeps the trace and a failed span when a span throws', async () => {
      const run = await store.start({ kind: 'agent', name: 'crashing' });

      await expect(run.span('tool', 'broken_tool', { x: 1 }, async () => Promise.reject(new Error('disk on fire')))).rejects.toThrow('disk on fire');

      const view = await store.get(run.traceId, ALL_TRACES);
      expect(view?.status).toBe('running');
      expect(view?.spans).toHaveLength(1);
      expect(view?.spans[0]).toMatchObject({ kind: 'tool', name: 'broken_tool', status: 'failed', error: 'disk on fire', input: { x: 1 }, output: null });

      await run.finish({ status: 'failed', error: 'run failed: disk on fire' });
      expect(await store.get(run.traceId, ALL_TRACES)).toMatchObject({ status: 'failed', error: 'run failed: disk on fire' });
    });

    it('records a span as failed when its result says so, even though it returned', async () => {
      const run = await store.start({ kind: 'agent', name: 'soft-failure' });

      await run.span('tool', 'query_demo_records', {}, async () => ({ success: false }), () => ({ status: 'failed', error: 'unknown field(s) bmi' }));

      expect((await store.get(run.traceId, ALL_TRACES))?.spans[0]).toMatchObject({ status: 'failed', error: 'unknown field(s) bmi' });
    });

    it('returns undefined for an unknown or malformed trace id', async () => {
      expect(await store.get('00000000-0000-4000-8000-000000000000', ALL_TRACES)).toBeUndefined();
      expect(await store.get('not-a-uuid', ALL_TRACES)).toBeUndefined();
      expect(await store.get("'; drop table traces; --", ALL_TRACES)).toBeUndefined();
      expect(await store.get('', ALL_TRACES)).toBeUndefined();
    });

    it('never stores a secret passed in `secrets`, in input, output or error', async () => {
      const apiKey = 'sk-live-4f9b2c7d1e0a8b6c5d4e3f2a';
      const adminToken = 'plain-admin-token-without-any-prefix-123';
      const secretStore = createTraceStore(database.db, { secrets: [apiKey, adminToken, undefined] });
      const run = await secretStore.start({ kind: 'agent', name: 'leaky', input: { header: `Bearer ${apiKey}`, token: adminToken } });

      await run.span('llm', 'qwen-plus', { apiKey, nested: [{ note: `key=${adminToken}` }] }, async () => ({ echoed: adminToken }));
      await expect(
        run.span('llm', 'qwen-plus', {}, async () => {
          throw new Error(`Incorrect API key provided: ${apiKey} (admin ${adminToken})`);
        }),
      ).rejects.toThrow();
      await run.finish({ status: 'failed', output: { key: apiKey }, error: `failed with ${adminToken}` });
      await secretStore.flush();

      const rows = [await storedTrace(run.traceId), ...(await storedSpans(run.traceId))];
      const stored = JSON.stringify(rows);
      expect(rows).toHaveLength(3);
      expect(stored).not.toContain(apiKey);
      expect(stored).not.toContain(adminToken);
      expect(stored).toContain('[redacted]');
    });

    it('shows a reader only their own runs and runs over their projects, and a reader with neither nothing', async () => {
      const me = '11111111-1111-4111-8111-111111111111';
      const someoneElse = '22222222-2222-4222-8222-222222222222';
      const mine = await store.start({ kind: 'agent', name: 'scoped-mine', userId: me });
      const myProject = await store.start({ kind: 'sop', name: 'scoped-project', projectId: 'scoped-a' });
      const theirs = await store.start({ kind: 'agent', name: 'scoped-theirs', userId: someoneElse });
      const otherProject = await store.start({ kind: 'sop', name: 'scoped-other', projectId: 'scoped-b' });
      const reader = { userId: me, projectIds: ['scoped-a'] };

      const names = (await store.list(reader, { limit: 500 })).map((t) => t.name);
      expect(names.filter((n) => n.startsWith('scoped-')).sort()).toEqual(['scoped-mine', 'scoped-project']);
      expect(await store.get(mine.traceId, reader)).toMatchObject({ userId: me });
      expect(await store.get(myProject.traceId, reader)).toMatchObject({ projectId: 'scoped-a' });
      expect(await store.get(theirs.traceId, reader)).toBeUndefined();
      expect(await store.get(otherProject.traceId, reader)).toBeUndefined();

      // No user id worth the name and no project: nothing, never everything.
      const nobody = { userId: 'not-a-uuid', projectIds: [] };
      expect(await store.list(nobody)).toEqual([]);
      expect(await store.get(mine.traceId, nobody)).toBeUndefined();
    });

    it('lists traces newest first', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const names: string[] = [];
      for (const [i, minute] of ['10', '11', '12'].entries()) {
        vi.setSystemTime(new Date(`2030-01-01T00:${minute}:00.000Z`));
        names.push(`listed-${i}`);
        await store.start({ kind: 'job', name: `listed-${i}` });
      }

      const listed = await store.list(ALL_TRACES, { limit: 3 });
      expect(listed.map((t) => t.name)).toEqual(['listed-2', 'listed-1', 'listed-0']);
      expect(listed[0]).toMatchObject({ kind: 'job', status: 'running', startedAt: '2030-01-01T00:12:00.000Z' });
      expect(listed[0]).not.toHaveProperty('input');

      const newest = await database.db.select({ name: traces.name }).from(traces).orderBy(desc(traces.startedAt)).limit(1);
      expect(newest[0]?.name).toBe('listed-2');
    });
  });

  describe('batched writing', () => {
    /** A pino destination that keeps each JSON line, as a log shipper would receive it. */
    function capturedLogger() {
      const lines: Array<Record<string, unknown>> = [];
      return { lines, logger: createLogger('error', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }) };
    }
    // Timers that never fire within a test: whatever arrives was written by a flush, a read, finish or close.
    const NEVER_BY_TIMER = 600_000;

    it('writes every span of many concurrent runs when the queue fills faster than batches are written', async () => {
      const busy = createTraceStore(database.db, { scheduledDelayMs: NEVER_BY_TIMER, maxExportBatchSize: 16, maxQueueSize: 32 });
      const RUNS = 12;
      const SPANS = 40;
      let deepestQueue = 0;
      const traceIds = await Promise.all(
        Array.from({ length: RUNS }, async (_, r) => {
          const run = await busy.start({ kind: 'agent', name: `load-${r}` });
          for (let i = 0; i < SPANS; i++) {
            await run.span('tool', `step-${i}`, { i }, async () => ({ i }), () => ({ output: { i }, usage: { promptTokens: 1, completionTokens: 2 } }));
            deepestQueue = Math.max(deepestQueue, busy.stats.queued);
          }
          await run.finish({ status: 'success' });
          return run.traceId;
        }),
      );

      await busy.flush();

      // Back-pressure, not dropping: a step that finds the queue full waits for a write, so the queue stays
      // bounded (each concurrent run may add its one step past the limit before it waits) and nothing is lost.
      expect(deepestQueue).toBeLessThanOrEqual(32 + RUNS);
      expect(busy.stats).toEqual({ queued: 0, failed: 0 });
      for (const id of traceIds) {
        const rows = await storedSpans(id);
        expect(rows.map((s) => s.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: SPANS }, (_, i) => i));
        expect(await storedTrace(id)).toMatchObject({ status: 'success', promptTokens: SPANS, completionTokens: 2 * SPANS });
      }
    });

    it('shows a reader the spans of a running trace and of a finished one before the batch reaches the tables', async () => {
      const lazy = createTraceStore(database.db, { scheduledDelayMs: NEVER_BY_TIMER });
      const run = await lazy.start({ kind: 'agent', name: 'read-through' });
      await run.span('llm', 'qwen-plus', { prompt: 'one' }, async () => 'a', () => ({ output: 'a', usage: { promptTokens: 7, completionTokens: 3 } }));

      expect(await storedTrace(run.traceId)).toBeUndefined(); // still queued: nothing on the request path wrote it
      expect((await lazy.get(run.traceId, ALL_TRACES))?.spans.map((s) => s.name)).toEqual(['qwen-plus']);

      await run.span('tool', 'calculate_rate', {}, async () => ({ rate: 1 }));
      await run.finish({ status: 'success', output: { answer: 'a' } });

      expect(lazy.stats.queued).toBe(2); // the second span and the end: finishing waited for no write
      expect((await lazy.list(ALL_TRACES, { limit: 500 })).find((t) => t.id === run.traceId)).toMatchObject({ status: 'success', promptTokens: 7, completionTokens: 3 });
      expect(await lazy.get(run.traceId, ALL_TRACES)).toMatchObject({ status: 'success', output: { answer: 'a' }, spans: [{ name: 'qwen-plus' }, { name: 'calculate_rate' }] });
      expect(await storedTrace(run.traceId)).toMatchObject({ status: 'success', output: { answer: 'a' }, promptTokens: 7, completionTokens: 3 });
    });

    it('writes the pending trace and spans of an unfinished run on close()', async () => {
      const closing = createTraceStore(database.db, { scheduledDelayMs: NEVER_BY_TIMER });
      const run = await closing.start({ kind: 'job', name: 'interrupted' });
      for (const name of ['first', 'second', 'third']) await run.span('step', name, {}, async () => name);
      expect(closing.stats.queued).toBe(4);
      expect(await storedTrace(run.traceId)).toBeUndefined();

      await closing.close();

      expect(closing.stats).toEqual({ queued: 0, failed: 0 });
      expect(await storedTrace(run.traceId)).toMatchObject({ status: 'running', name: 'interrupted' });
      expect((await storedSpans(run.traceId)).map((s) => s.name).sort()).toEqual(['first', 'second', 'third']);
    });

    it('logs a span the database refuses and keeps the run and the other spans of its batch', async () => {
      const { lines, logger } = capturedLogger();
      const faulty = createTraceStore(database.db, { scheduledDelayMs: NEVER_BY_TIMER, logger, secrets: ['sk-never-in-a-log-line-0042'] });
      const run = await faulty.start({ kind: 'agent', name: 'unstorable' });

      await run.span('tool', 'before', {}, async () => 'ok');
      // PostgreSQL stores no NUL character in text or jsonb: this row fails however it is written.
      const answer = await run.span('tool', 'nul-output', { key: 'sk-never-in-a-log-line-0042' }, async () => 'a\u0000b');
      await run.span('tool', 'after', {}, async () => 'ok');
      await run.finish({ status: 'success' });
      await faulty.flush();

      expect(answer).toBe('a\u0000b');
      expect(await storedTrace(run.traceId)).toMatchObject({ status: 'success' });
      expect((await storedSpans(run.traceId)).map((s) => s.name).sort()).toEqual(['after', 'before']);
      expect(faulty.stats.failed).toBe(1);
      expect(lines).toEqual([expect.objectContaining({ traceId: run.traceId, failedWrites: 1, msg: expect.stringContaining('could not write a span') })]);
      expect(JSON.stringify(lines)).not.toContain('sk-never-in-a-log-line-0042');
    });
  });
});
