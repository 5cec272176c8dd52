import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../../core/db/connect.js';
import { runMigrations } from '../../core/db/migrate.js';
import { createChunkLoader, syntheticTexts } from '../../testing/rag-chunks.js';
import { TEST_AUDIT_KEY } from '../../testing/test-database.js';
import { createLocalEmbedder } from '../local-embedder.js';
import * as q from '../rag-sql.js';
import { createRagStore } from '../rag-store.js';
import type { RagStore } from '../types.js';

/**
 * The embedded database's scope indexes as graphs in the server's memory (memory-index/): built only by
 * indexScope, in steps; complete at every moment (chunks newer than the graph compared exactly, deleted ones never
 * returned, whoever deleted them); gone at a restart, when the scope is searched exactly until it is built again.
 * The index threshold is lowered to INDEX_FROM so a thousand chunks make a "large" scope.
 */
const INDEX_FROM = 300;
const COLLECTION = 'graph-test';
const MAJOR = 'major';
/** A scenario id pgvector's scope indexes refuse (quote, space): the graphs take it as a bound parameter. */
const ODD = "o'brien trial";
const QUESTIONS = ['肝功能 转氨酶 ALT 暂停给药', 'visit window baseline endpoint', '不良事件 合并用药 血压', 'HbA1c deviation dose'];

let database: Database;
let store: RagStore;
const embedder = createLocalEmbedder();

let chunks: ReturnType<typeof createChunkLoader>;
const load = (scenarioId: string, documentId: string, contents: string[]) => chunks.load(scenarioId, documentId, contents);
const exact = (scenarioId: string, query: string, topK: number) => chunks.exact(scenarioId, query, topK);

/** Questions over the chunks' vocabulary, for recall measured over many answers rather than one. */
const RECALL_QUESTIONS = [
  ...QUESTIONS,
  '受试者 筛选 随机化 基线',
  'patient dose window AST',
  '访视 窗口 终点 心率',
  'endpoint deviation 暂停 给药',
  '转氨酶 ALT AST 肝功能 patient',
  '血压 心率 baseline visit',
  '合并用药 dose HbA1c 筛选',
  '随机化 终点 deviation window',
];

/**
 * Answers of an approximate index: every query gets topK distinct chunks, and over all the questions at least 90 %
 * of them are true top-k answers (no farther than the exact k-th: near-identical chunks tie). A graph of duplicates
 * may leave a chunk unreachable, so exactness per query is not promised; the bench holds the 0.95 target.
 */
async function expectGoodAnswers(target: RagStore, scenarioId: string, topK = 10, questions: readonly string[] = RECALL_QUESTIONS): Promise<void> {
  let hits = 0;
  let answers = 0;
  for (const query of questions) {
    const found = await target.retrieve({ scenarioId, query, collection: COLLECTION, topK });
    const reference = await exact(scenarioId, query, topK);
    expect(found, query).toHaveLength(reference.length);
    expect(new Set(found.map((hit) => hit.chunkId)).size, query).toBe(found.length);
    hits += found.filter((hit) => 1 - hit.score <= reference.at(-1)!.distance + 1e-6).length;
    answers += reference.length;
  }
  expect(hits / answers).toBeGreaterThanOrEqual(0.9);
}

async function pgvectorScopeIndexes(): Promise<string[]> {
  return (await queryRows<{ indexname: string }>(database.db, sql`SELECT indexname FROM pg_indexes WHERE tablename = 'rag_chunks' AND indexname LIKE 'rag_scope_%'`)).map((row) => row.indexname);
}

beforeAll(async () => {
  database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  await runMigrations(database);
  chunks = createChunkLoader(database.db, embedder, COLLECTION);
  store = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM });
  await q.insertCollection(database.db, { name: COLLECTION, embeddingModel: embedder.model, dimension: embedder.dimension });
  await load(MAJOR, 'doc-major-1', syntheticTexts(700, 7));
  await load(MAJOR, 'doc-major-2', syntheticTexts(700, 8));
  await load('minor', 'doc-minor', syntheticTexts(40, 9));
  await load(ODD, 'doc-odd', syntheticTexts(400, 10));
}, 120_000);

afterAll(async () => {
  await database.close();
});

describe('in-process scope graphs on the embedded database', () => {
  it('numbers every chunk (migration 0018), in the order they were written', async () => {
    const rows = await queryRows<{ seq: string | number | null; document_id: string; chunk_index: number }>(database.db, sql`SELECT seq, document_id, chunk_index FROM rag_chunks WHERE collection = ${COLLECTION} ORDER BY seq`);
    expect(rows.every((row) => row.seq !== null)).toBe(true);
    expect(new Set(rows.map((row) => Number(row.seq))).size).toBe(rows.length);
    expect(rows[0]).toMatchObject({ document_id: 'doc-major-1', chunk_index: 0 });
  });

  it('answers a large scope exactly before any build, and never builds one for a query', async () => {
    for (const query of QUESTIONS) {
      const hits = await store.retrieve({ scenarioId: MAJOR, query, collection: COLLECTION, topK: 10 });
      expect(hits.map((hit) => hit.chunkId)).toEqual((await exact(MAJOR, query, 10)).map((row) => row.id));
    }
    expect(await store.indexStatus({ scenarioId: MAJOR, collection: COLLECTION })).toMatchObject({ chunks: 1400, indexedChunks: 0, percent: 0, state: 'none', search: 'exact', index: 'in-process' });
  });

  it('builds the graph in indexScope, in steps with progress, letting timers run between steps, and no pgvector index', async () => {
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    const reports: Array<{ percent: number; timerRan: boolean }> = [];
    const status = await store.indexScope({ scenarioId: MAJOR, collection: COLLECTION }, { onProgress: ({ percent }) => void reports.push({ percent, timerRan }) });
    expect(status).toMatchObject({ chunks: 1400, indexedChunks: 1400, percent: 100, state: 'ready', search: 'index', index: 'in-process' });
    expect(status.steps).toBeGreaterThanOrEqual(2);
    expect(reports).toHaveLength(status.steps);
    expect(reports.map((report) => report.percent)).toEqual([...reports.map((report) => report.percent)].sort((a, b) => a - b));
    expect(reports.at(-1)).toEqual({ percent: 100, timerRan: true });
    expect(await pgvectorScopeIndexes()).toEqual([]);
  });

  it('answers through the graph with the true nearest chunks (recall over many questions)', async () => {
    await expectGoodAnswers(store, MAJOR);
  });

  it('finds chunks written after the graph before indexScope adds them, then adds them', async () => {
    const text = 'Hepatic safety stopping rule: interrupt dosing when ALT exceeds five times the upper limit and bilirubin doubles. '.repeat(3);
    await store.ingestDocument({ documentId: 'doc-major-new', scenarioId: MAJOR, sourceFile: 'new.md', text, collection: COLLECTION });
    expect(await store.indexStatus({ scenarioId: MAJOR, collection: COLLECTION })).toMatchObject({ state: 'extending', search: 'index', chunks: 1401, indexedChunks: 1400 });
    const [hit] = await store.retrieve({ scenarioId: MAJOR, query: 'interrupt dosing when ALT exceeds five times the upper limit', collection: COLLECTION, topK: 3 });
    expect(hit).toMatchObject({ documentId: 'doc-major-new', sourceFile: 'new.md' });
    expect(await store.indexScope({ scenarioId: MAJOR, collection: COLLECTION })).toMatchObject({ state: 'ready', indexedChunks: 1401 });
    const [again] = await store.retrieve({ scenarioId: MAJOR, query: 'interrupt dosing when ALT exceeds five times the upper limit', collection: COLLECTION, topK: 3 });
    expect(again).toMatchObject({ documentId: 'doc-major-new' });
  });

  it('never returns a replaced chunk: the old text is gone from the answers, the new one is found', async () => {
    const oldText = 'Visit 9 windows are plus or minus three days around day 120 for the dermatology assessment. '.repeat(3);
    const newText = 'Unscheduled visits record the reason, the vital signs and any concomitant medication change. '.repeat(3);
    await store.ingestDocument({ documentId: 'doc-major-swap', scenarioId: MAJOR, sourceFile: 'swap.md', text: oldText, collection: COLLECTION });
    await store.indexScope({ scenarioId: MAJOR, collection: COLLECTION });
    expect((await store.retrieve({ scenarioId: MAJOR, query: 'visit 9 window day 120 dermatology', collection: COLLECTION, topK: 1 }))[0]?.content).toContain('Visit 9');
    await store.ingestDocument({ documentId: 'doc-major-swap', scenarioId: MAJOR, sourceFile: 'swap.md', text: newText, collection: COLLECTION });
    const hits = await store.retrieve({ scenarioId: MAJOR, query: 'visit 9 window day 120 dermatology', collection: COLLECTION, topK: 20 });
    expect(hits.some((hit) => hit.content.includes('Visit 9'))).toBe(false);
    expect((await store.retrieve({ scenarioId: MAJOR, query: 'unscheduled visits reason vital signs', collection: COLLECTION, topK: 1 }))[0]?.documentId).toBe('doc-major-swap');
    await expectGoodAnswers(store, MAJOR, 10, ['visit 9 window day 120 dermatology', ...RECALL_QUESTIONS]);
  });

  it('keeps answers complete when another store deletes half the scope behind the graph', async () => {
    // The graph does not hear of deletes made through another store: half its candidates are dead, and the query
    // must ask it for more rather than answer short.
    const other = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM });
    expect(await other.deleteDocument('doc-major-1')).toBe(true);
    for (const query of QUESTIONS) {
      const hits = await store.retrieve({ scenarioId: MAJOR, query, collection: COLLECTION, topK: 10 });
      expect(hits).toHaveLength(10);
      expect(hits.every((hit) => hit.documentId !== 'doc-major-1')).toBe(true);
    }
    await expectGoodAnswers(store, MAJOR);
  });

  it('answers completely from a graph whose chunks were nearly all deleted behind it', async () => {
    // 5 200 chunks deleted through another store: the graph's candidates are all dead however many it is asked
    // for, until the query gives up on it (past 5 000) and searches the scope exactly.
    await load('churn', 'doc-churn-big', syntheticTexts(5_200, 21));
    await load('churn', 'doc-churn-kept', syntheticTexts(5, 22));
    expect(await store.indexScope({ scenarioId: 'churn', collection: COLLECTION })).toMatchObject({ state: 'ready', indexedChunks: 5_205 });
    expect(await createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM }).deleteDocument('doc-churn-big')).toBe(true);
    const hits = await store.retrieve({ scenarioId: 'churn', query: QUESTIONS[0]!, collection: COLLECTION, topK: 5 });
    expect(hits.map((hit) => hit.chunkId).sort()).toEqual(['doc-churn-kept#0', 'doc-churn-kept#1', 'doc-churn-kept#2', 'doc-churn-kept#3', 'doc-churn-kept#4']);
  });

  it('forgets what this store deletes', async () => {
    expect(await store.deleteDocument('doc-major-new')).toBe(true);
    const hits = await store.retrieve({ scenarioId: MAJOR, query: 'interrupt dosing when ALT exceeds five times the upper limit', collection: COLLECTION, topK: 5 });
    expect(hits.some((hit) => hit.documentId === 'doc-major-new')).toBe(false);
  });

  it('keeps scopes apart, and indexes a scope whose id pgvector could not name', async () => {
    expect(await store.indexScope({ scenarioId: ODD, collection: COLLECTION })).toMatchObject({ chunks: 400, indexedChunks: 400, state: 'ready', search: 'index' });
    for (const query of QUESTIONS) {
      const hits = await store.retrieve({ scenarioId: ODD, query, collection: COLLECTION, topK: 10 });
      expect(hits.every((hit) => hit.scenarioId === ODD && hit.documentId === 'doc-odd')).toBe(true);
    }
    await expectGoodAnswers(store, ODD);
    const major = await store.retrieve({ scenarioId: MAJOR, query: QUESTIONS[0]!, collection: COLLECTION, topK: 50 });
    expect(major.every((hit) => hit.scenarioId === MAJOR)).toBe(true);
  });

  it('leaves a small scope without a graph, and searches named documents exactly within the scope', async () => {
    expect(await store.indexScope({ scenarioId: 'minor', collection: COLLECTION })).toMatchObject({ chunks: 40, state: 'none', search: 'exact', steps: 0 });
    const named = await store.retrieve({ scenarioId: MAJOR, query: QUESTIONS[1]!, collection: COLLECTION, topK: 20, documentIds: ['doc-major-2', 'doc-minor', 'doc-odd'] });
    expect(named).toHaveLength(20);
    expect(new Set(named.map((hit) => hit.documentId))).toEqual(new Set(['doc-major-2']));
  });

  it('takes two builds of one scope at once in turn, adding each chunk once', async () => {
    await load(MAJOR, 'doc-major-3', syntheticTexts(600, 11));
    const [a, b] = await Promise.all([store.indexScope({ scenarioId: MAJOR, collection: COLLECTION }), store.indexScope({ scenarioId: MAJOR, collection: COLLECTION })]);
    const chunks = (await store.indexStatus({ scenarioId: MAJOR, collection: COLLECTION })).chunks;
    for (const status of [a, b]) expect(status).toMatchObject({ chunks, indexedChunks: chunks, state: 'ready' });
    await expectGoodAnswers(store, MAJOR);
  });

  it('starts with no graph after a restart: exact answers until indexScope builds it again from the table', async () => {
    const restarted = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM });
    const before = await restarted.indexStatus({ scenarioId: MAJOR, collection: COLLECTION });
    expect(before).toMatchObject({ state: 'none', search: 'exact', indexedChunks: 0 });
    for (const query of QUESTIONS) {
      const hits = await restarted.retrieve({ scenarioId: MAJOR, query, collection: COLLECTION, topK: 10 });
      expect(hits.map((hit) => hit.chunkId)).toEqual((await exact(MAJOR, query, 10)).map((row) => row.id));
    }
    expect(await restarted.indexScope({ scenarioId: MAJOR, collection: COLLECTION })).toMatchObject({ state: 'ready', indexedChunks: before.chunks });
    await expectGoodAnswers(restarted, MAJOR);
  });

  it('uses pgvector on the embedded database when the graphs are turned off', async () => {
    const pgvector = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM, inProcessGraphs: false });
    expect(await pgvector.indexStatus({ scenarioId: MAJOR, collection: COLLECTION })).toMatchObject({ index: 'pgvector', state: 'none' });
  });
});
