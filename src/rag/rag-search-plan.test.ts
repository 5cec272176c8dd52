import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database, type Db } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { createLocalEmbedder } from './local-embedder.js';
import * as q from './rag-sql.js';
import { createRagStore, efSearchFor } from './rag-store.js';
import type { RagStore } from './types.js';
import { collectionIndexName, vectorShape } from './vector-sql.js';
import { withTransaction } from '../core/db/transaction.js';

/**
 * Whether searches really use the collection's HNSW index, and still return topK rows when the scenario
 * filter discards most of what the index finds. Needs enough rows that the planner prefers the index to a
 * sequential scan (a few thousand), so the rows are bulk-inserted the way the benchmark does it.
 */
const TOTAL_CHUNKS = 8000;
/** Every 20th chunk belongs to the small scenario, so the index's 400 candidates hold only ~20-40 of its chunks. */
const MINOR_EVERY = 20;
const COLLECTION = 'plan-test';

let database: Database;
let store: RagStore;
const embedder = createLocalEmbedder();

beforeAll(async () => {
  database = await openDatabase({});
  await runMigrations(database);
  store = createRagStore({ db: database.db, embedder });

  const vocabulary = '受试者 筛选 随机化 访视 窗口 给药 暂停 肝功能 转氨酶 不良事件 合并用药 终点 基线 血压 心率 patient dose visit window ALT AST baseline endpoint HbA1c deviation'.split(' ');
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const texts = Array.from({ length: TOTAL_CHUNKS }, () => Array.from({ length: 40 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' '));
  const vectors = await embedder.embed(texts);
  await q.insertCollection(database.db, { name: COLLECTION, embeddingModel: embedder.model, dimension: embedder.dimension });
  for (const scenario of ['major', 'minor']) {
    await q.upsertDocument(database.db, { id: `doc-${scenario}`, scenarioId: scenario, collection: COLLECTION, sourceFile: `${scenario}.md`, contentHash: 'x', chunkCount: 0 });
  }
  await q.insertChunkRows(
    database.db,
    texts.map((content, i) => {
      const scenarioId = i % MINOR_EVERY === 0 ? 'minor' : 'major';
      return { documentId: `doc-${scenarioId}`, chunkIndex: i, scenarioId, collection: COLLECTION, content, start: 0, end: content.length, embedding: vectors[i]! };
    }),
  );
}, 120_000);

afterAll(async () => {
  await database.close();
});

/**
 * Runs the store's search statement with the store's settings. `forceIndex` disables sorting, which leaves the
 * HNSW index as the only ordered path: for a 5% scope the planner would rightly prefer the scope b-tree and
 * an exact sort, and this is about what happens when it does pick the index (larger collections).
 */
async function search(scenarioId: string, topK: number, options: { iterativeScan: boolean; forceIndex?: boolean }) {
  const [vector] = await embedder.embed(['肝功能 转氨酶 ALT 暂停给药']);
  return withTransaction(database.db, async (tx) => {
    await q.setSearchParameters(tx, { efSearch: efSearchFor(topK), iterativeScan: options.iterativeScan });
    if (options.forceIndex) await tx.execute(sql`SET LOCAL enable_sort = off`);
    const query = q.nearestChunksQuery({ collection: COLLECTION, shape: vectorShape(embedder.dimension), scenarioId, vector: vector!, topK });
    const plan = (await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`)).map((row) => Object.values(row)[0]).join('\n');
    return { plan, rows: await queryRows<q.NearestChunkRow>(tx, query) };
  });
}

describe('RAG search plan', () => {
  const indexScan = `Index Scan using ${collectionIndexName(COLLECTION, embedder.dimension)}`;

  it('builds the collection index on first use and searches through it', async () => {
    expect(await store.retrieve({ scenarioId: 'major', query: '肝功能 暂停给药', collection: COLLECTION, topK: 5 })).toHaveLength(5);
    const [definition] = await queryRows<{ indexdef: string }>(database.db, sql`SELECT indexdef FROM pg_indexes WHERE indexname = ${collectionIndexName(COLLECTION, embedder.dimension)}`);
    expect(definition!.indexdef).toMatch(/USING hnsw \(\(\(embedding\)::vector\(256\)\) vector_cosine_ops\).*WHERE \(collection = 'plan-test'::text\)/);
    expect((await search('major', 5, { iterativeScan: true })).plan).toContain(indexScan);
  });

  it('returns topK rows through the index for a scenario holding 5% of the collection, thanks to the iterative scan', async () => {
    const { plan, rows } = await search('minor', 50, { iterativeScan: true, forceIndex: true });
    expect(plan).toContain(indexScan);
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((row) => row.scenario_id))).toEqual(new Set(['minor']));
    expect(rows.map((row) => row.distance)).toEqual([...rows.map((row) => row.distance)].sort((a, b) => a - b));
  });

  it('would have returned fewer than topK rows without it', async () => {
    const { plan, rows } = await search('minor', 50, { iterativeScan: false, forceIndex: true });
    expect(plan).toContain(indexScan);
    expect(rows.length).toBeLessThan(50);
  });

  it('lets retrieve() return topK rows for the small scenario, whichever plan the planner picks', async () => {
    const hits = await store.retrieve({ scenarioId: 'minor', query: '肝功能 转氨酶 ALT 暂停给药', collection: COLLECTION, topK: 50 });
    expect(hits).toHaveLength(50);
    expect(new Set(hits.map((hit) => hit.scenarioId))).toEqual(new Set(['minor']));
  });
});
