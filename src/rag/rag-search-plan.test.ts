import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database, type Db } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { createLocalEmbedder } from './local-embedder.js';
import * as q from './rag-sql.js';
import { createRagStore } from './rag-store.js';
import type { RagStore } from './types.js';
import { collectionIndexName, vectorShape } from './vector-sql.js';

/**
 * Whether searches really use the collection's HNSW index, and still return topK rows when the scenario
 * filter discards most of what the index finds. Needs enough rows that the planner prefers the index to a
 * sequential scan (a few thousand), so the rows are bulk-inserted the way the benchmark does it.
 */
const TOTAL_CHUNKS = 8000;
/**
 * Every 10th chunk belongs to the small scenario. At 10% the planner still prefers the HNSW index (at 5% it
 * rightly switches to the scope b-tree and an exact sort), and ef_search=100 alone would find about 10.
 */
const MINOR_EVERY = 10;
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

async function explain(scenarioId: string, topK: number): Promise<string> {
  const [vector] = await embedder.embed(['肝功能 转氨酶 ALT 暂停给药']);
  return database.db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await q.setSearchParameters(tx, { efSearch: 100, iterativeScan: true });
    const query = q.nearestChunksQuery({ collection: COLLECTION, shape: vectorShape(embedder.dimension), scenarioId, vector: vector!, topK });
    const rows = await queryRows<Record<string, string>>(tx, sql`EXPLAIN ${query}`);
    return rows.map((row) => Object.values(row)[0]).join('\n');
  });
}

describe('RAG search plan', () => {
  it('builds the collection index on first use and searches through it', async () => {
    expect(await store.retrieve({ scenarioId: 'major', query: '肝功能 暂停给药', collection: COLLECTION, topK: 5 })).toHaveLength(5);
    const indexName = collectionIndexName(COLLECTION, embedder.dimension);
    const [definition] = await queryRows<{ indexdef: string }>(database.db, sql`SELECT indexdef FROM pg_indexes WHERE indexname = ${indexName}`);
    expect(definition!.indexdef).toMatch(/USING hnsw \(\(\(embedding\)::vector\(256\)\) vector_cosine_ops\).*WHERE \(collection = 'plan-test'::text\)/);
    expect(await explain('major', 5)).toContain(`Index Scan using ${indexName}`);
  });

  it('returns topK rows for a scenario holding 10% of the collection, thanks to the iterative index scan', async () => {
    expect(await explain('minor', 30)).toContain(`Index Scan using ${collectionIndexName(COLLECTION, embedder.dimension)}`);
    const hits = await store.retrieve({ scenarioId: 'minor', query: '肝功能 转氨酶 ALT 暂停给药', collection: COLLECTION, topK: 30 });
    expect(hits).toHaveLength(30);
    expect(new Set(hits.map((hit) => hit.scenarioId))).toEqual(new Set(['minor']));
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
  });

  it('would have returned fewer than topK rows without it', async () => {
    const [vector] = await embedder.embed(['肝功能 转氨酶 ALT 暂停给药']);
    const rows = await database.db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      await q.setSearchParameters(tx, { efSearch: 100, iterativeScan: false });
      return q.selectNearestChunks(tx, { collection: COLLECTION, shape: vectorShape(embedder.dimension), scenarioId: 'minor', vector: vector!, topK: 30 });
    });
    expect(rows.length).toBeLessThan(30);
  });
});
