import type { Db } from '../core/db/connect.js';
import type { Embedder } from '../rag/index.js';
import * as q from '../rag/rag-sql.js';
import { vectorShape } from '../rag/vector-sql.js';

/**
 * Chunks for the search tests: texts from a seeded generator over a small bilingual protocol vocabulary (many
 * near-duplicates, a hard case for approximate search), written the way a bulk load writes them (outside any
 * index), and the exact nearest chunks to compare answers with.
 */
export function syntheticTexts(count: number, seed: number): string[] {
  const vocabulary = '受试者 筛选 随机化 访视 窗口 给药 暂停 肝功能 转氨酶 不良事件 合并用药 终点 基线 血压 心率 patient dose visit window ALT AST baseline endpoint HbA1c deviation'.split(' ');
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Array.from({ length: 40 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' '));
}

export function createChunkLoader(db: Db, embedder: Embedder, collection: string) {
  const shape = vectorShape(embedder.dimension);
  return {
    /** One document's chunks, written outside any index. */
    async load(scenarioId: string, documentId: string, contents: string[]): Promise<void> {
      const vectors = await embedder.embed(contents);
      await q.upsertDocument(db, { id: documentId, scenarioId, collection, sourceFile: `${documentId}.md`, contentHash: documentId, chunkCount: contents.length });
      await q.insertChunkRows(db, contents.map((content, i) => ({ documentId, chunkIndex: i, scenarioId, collection, content, start: 0, end: content.length, embedding: vectors[i]! })));
    },
    /** The scope's exact nearest chunks (`document#index`) with their distances. */
    async exact(scenarioId: string, query: string, topK: number): Promise<Array<{ id: string; distance: number }>> {
      const [vector] = await embedder.embed([query]);
      const rows = await q.selectNearestChunks(db, q.exactNearestQuery({ collection, scenarioId, shape, vector: vector!, topK }));
      return rows.map((row) => ({ id: `${row.document_id}#${row.chunk_index}`, distance: Number(row.distance) }));
    },
  };
}
