import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { createChunkLoader, syntheticTexts } from '../testing/rag-chunks.js';
import { TEST_AUDIT_KEY } from '../testing/test-database.js';
import { createLocalEmbedder } from './local-embedder.js';
import * as q from './rag-sql.js';
import { createRagStore } from './rag-store.js';
import { chooseSearchPlan, efSearchFor, MIN_INDEXED_SCOPE_CHUNKS } from './search-plan.js';
import type { RagStore } from './types.js';
import { scopeIndexName, vectorShape } from './vector-sql.js';
import { withTransaction } from '../core/db/transaction.js';

/**
 * The pgvector search plan (a server database's; tested here on PGlite with the in-process graphs turned off) and
 * its index's life cycle: a query never builds an index and answers exactly until one exists; the ingest job's
 * indexScope builds it in steps with progress; chunks ingested afterwards are found before they reach the index.
 * The store's index threshold is lowered to INDEX_FROM so a few hundred chunks make a "large" scope; the plan's
 * choice at the real threshold is tested on its own.
 */
const INDEX_FROM = 300;
const MAJOR_CHUNKS = 420;
const MINOR_CHUNKS = 40;
const COLLECTION = 'plan-test';
const QUESTIONS = ['肝功能 转氨酶 ALT 暂停给药', 'visit window baseline endpoint', '不良事件 合并用药 血压', 'HbA1c deviation dose'];

let database: Database;
let store: RagStore;
const embedder = createLocalEmbedder();
const shape = vectorShape(embedder.dimension);
const majorIndex = scopeIndexName(COLLECTION, 'major', embedder.dimension)!;

let chunks: ReturnType<typeof createChunkLoader>;
const load = (scenarioId: string, documentId: string, contents: string[]) => chunks.load(scenarioId, documentId, contents);
const exactIds = (scenarioId: string, query: string, topK: number) => chunks.exact(scenarioId, query, topK);

async function scopeIndexes(): Promise<string[]> {
  return (await queryRows<{ indexname: string }>(database.db, sql`SELECT indexname FROM pg_indexes WHERE tablename = 'rag_chunks' AND indexname LIKE 'rag_scope_%'`)).map((row) => row.indexname);
}

beforeAll(async () => {
  database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  await runMigrations(database);
  chunks = createChunkLoader(database.db, embedder, COLLECTION);
  store = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM, inProcessGraphs: false });
  await q.insertCollection(database.db, { name: COLLECTION, embeddingModel: embedder.model, dimension: embedder.dimension });
  await load('major', 'doc-major-1', syntheticTexts(MAJOR_CHUNKS / 2, 7));
  await load('major', 'doc-major-2', syntheticTexts(MAJOR_CHUNKS / 2, 8));
  await load('minor', 'doc-minor', syntheticTexts(MINOR_CHUNKS, 9));
}, 120_000);

afterAll(async () => {
  await database.close();
});

describe('chooseSearchPlan', () => {
  it('searches exactly below the threshold and while no index exists, whatever the size', () => {
    expect(chooseSearchPlan({ scopeChunks: MIN_INDEXED_SCOPE_CHUNKS - 1, searchedChunks: MIN_INDEXED_SCOPE_CHUNKS - 1, indexExists: true, topK: 5 })).toEqual({ kind: 'exact' });
    expect(chooseSearchPlan({ scopeChunks: 1_000_000, searchedChunks: 1_000_000, indexExists: false, topK: 5 })).toEqual({ kind: 'exact' });
  });

  it('uses the index from the threshold on, with more candidates for larger scopes', () => {
    expect(chooseSearchPlan({ scopeChunks: MIN_INDEXED_SCOPE_CHUNKS, searchedChunks: MIN_INDEXED_SCOPE_CHUNKS, indexExists: true, topK: 5 })).toEqual({ kind: 'index', efSearch: efSearchFor(MIN_INDEXED_SCOPE_CHUNKS, 5) });
    expect(efSearchFor(200_000, 5)).toBeGreaterThan(efSearchFor(10_000, 5));
    expect(efSearchFor(10_000, 50)).toBeGreaterThanOrEqual(100);
  });

  it('searches a few named documents of an indexed scope exactly', () => {
    expect(chooseSearchPlan({ scopeChunks: 100_000, searchedChunks: 120, indexExists: true, topK: 5 })).toEqual({ kind: 'exact' });
  });
});

describe('the scope index life cycle', () => {
  it('answers a query on a large scope without an index exactly, and creates no index', async () => {
    for (const query of QUESTIONS) {
      const hits = await store.retrieve({ scenarioId: 'major', query, collection: COLLECTION, topK: 10 });
      expect(hits.map((hit) => hit.chunkId)).toEqual((await exactIds('major', query, 10)).map((row) => row.id));
    }
    expect(await scopeIndexes()).toEqual([]);
    expect(await store.indexStatus({ scenarioId: 'major', collection: COLLECTION })).toMatchObject({ chunks: MAJOR_CHUNKS, indexedChunks: 0, percent: 0, state: 'none', search: 'exact' });
  });

  it('builds the index in indexScope, in steps, reporting progress up to 100 %, letting timers and I/O run between steps', async () => {
    const reports: number[] = [];
    // PGlite resolves statements as microtasks: without a yield between steps no timer (nor HTTP request) would run
    // until indexScope returned. A timer due at once must have run by the last step (there are at least three).
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    const timerSeen: boolean[] = [];
    const status = await store.indexScope({ scenarioId: 'major', collection: COLLECTION }, {
      onProgress: ({ percent }) => {
        reports.push(percent);
        timerSeen.push(timerRan);
      },
    });
    expect(status.steps).toBeGreaterThanOrEqual(3);
    expect(timerSeen.at(-1)).toBe(true);
    expect(status).toMatchObject({ chunks: MAJOR_CHUNKS, indexedChunks: MAJOR_CHUNKS, percent: 100, state: 'ready', search: 'index' });
    expect(status.steps).toBeGreaterThan(1);
    expect(reports.length).toBe(status.steps);
    expect(reports).toEqual([...reports].sort((a, b) => a - b));
    expect(reports.at(-1)).toBe(100);
    const [definition] = await queryRows<{ indexdef: string }>(database.db, sql`SELECT indexdef FROM pg_indexes WHERE indexname = ${majorIndex}`);
    expect(definition!.indexdef).toMatch(/USING hnsw \(\(\(embedding\)::vector\(256\)\) vector_cosine_ops\).*WHERE \(\(collection = 'plan-test'::text\) AND \(scenario_id = 'major'::text\) AND indexed\)/);
  });

  it('searches through the scope index, and finds the true nearest chunks', async () => {
    const [vector] = await embedder.embed([QUESTIONS[0]!]);
    const plan = await withTransaction(database.db, async (tx) => {
      await q.setIndexSearchParameters(tx, { efSearch: efSearchFor(MAJOR_CHUNKS, 10), iterativeScan: true });
      const query = q.indexedNearestQuery({ collection: COLLECTION, scenarioId: 'major', shape, vector: vector!, topK: 10 });
      return (await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`)).map((row) => Object.values(row)[0]).join('\n');
    });
    expect(plan).toContain(`Index Scan using ${majorIndex}`);
    expect(plan).toContain('rag_chunks_unindexed_idx');
    for (const query of QUESTIONS) {
      const hits = await store.retrieve({ scenarioId: 'major', query, collection: COLLECTION, topK: 10 });
      const exact = await exactIds('major', query, 10);
      // Near-identical chunks tie; any chunk no farther than the exact 10th is a correct answer.
      expect(hits.filter((hit) => 1 - hit.score <= exact.at(-1)!.distance + 1e-6)).toHaveLength(10);
    }
  });

  it('finds chunks ingested after the index was built before the ingest job adds them, then adds them', async () => {
    const text = 'Hepatic safety stopping rule: interrupt dosing when ALT exceeds five times the upper limit and bilirubin doubles. '.repeat(3);
    await store.ingestDocument({ documentId: 'doc-major-new', scenarioId: 'major', sourceFile: 'new.md', text, collection: COLLECTION });
    const extending = await store.indexStatus({ scenarioId: 'major', collection: COLLECTION });
    expect(extending).toMatchObject({ state: 'extending', search: 'index', chunks: MAJOR_CHUNKS + 1, indexedChunks: MAJOR_CHUNKS });
    expect(extending.percent).toBeLessThan(100);

    const hits = await store.retrieve({ scenarioId: 'major', query: 'interrupt dosing when ALT exceeds five times the upper limit', collection: COLLECTION, topK: 3 });
    expect(hits[0]).toMatchObject({ documentId: 'doc-major-new', sourceFile: 'new.md' });

    expect(await store.indexScope({ scenarioId: 'major', collection: COLLECTION })).toMatchObject({ state: 'ready', percent: 100, indexedChunks: MAJOR_CHUNKS + 1 });
    const again = await store.retrieve({ scenarioId: 'major', query: 'interrupt dosing when ALT exceeds five times the upper limit', collection: COLLECTION, topK: 3 });
    expect(again[0]).toMatchObject({ documentId: 'doc-major-new' });
  });

  it('keeps the scope filter and the document filter on the index plan', async () => {
    // A lower threshold makes the 210 chunks of the named documents a search for the index, with the iterative scan.
    const lowThreshold = createRagStore({ db: database.db, embedder, indexFromChunks: 100, inProcessGraphs: false });
    const hits = await lowThreshold.retrieve({ scenarioId: 'major', query: QUESTIONS[1]!, collection: COLLECTION, topK: 20, documentIds: ['doc-major-2', 'doc-minor'] });
    expect(hits).toHaveLength(20);
    expect(new Set(hits.map((hit) => hit.documentId))).toEqual(new Set(['doc-major-2']));
  });

  it('leaves a scope below the threshold without an index, searched exactly', async () => {
    expect(await store.indexScope({ scenarioId: 'minor', collection: COLLECTION })).toMatchObject({ chunks: MINOR_CHUNKS, state: 'none', search: 'exact', steps: 0 });
    expect(await scopeIndexes()).toEqual([majorIndex]);
    const hits = await store.retrieve({ scenarioId: 'minor', query: QUESTIONS[2]!, collection: COLLECTION, topK: 5 });
    expect(hits.map((hit) => hit.chunkId)).toEqual((await exactIds('minor', QUESTIONS[2]!, 5)).map((row) => row.id));
  });
});
