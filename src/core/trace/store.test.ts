import { desc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestDatabase } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { spans, traces } from '../db/schema/trace.js';
import { ALL_TRACES, createTraceStore, type TraceStore } from './store.js';

let database: Database;
let store: TraceStore;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createTraceStore(database.db);
});

afterAll(async () => {
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

describe('createTraceStore', () => {
  it('writes a running trace before any span is recorded', async () => {
    const run = await store.start({ kind: 'agent', name: 'qc-check', input: { question: 'Which subjects miss consent?' } });

    const row = await storedTrace(run.traceId);
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
