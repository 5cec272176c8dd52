import { createHash, randomUUID } from 'node:crypto';
import { appendAudit, PLATFORM_AUDIT_SCOPE } from '../core/audit/audit-log.js';
import type { Db } from '../core/db/connect.js';
import type { Embedder } from '../core/embeddings.js';
import { ClinAgentError } from '../core/errors.js';
import { chunkText } from './chunk-text.js';
import { createChunkStatistics } from './chunk-statistics.js';
import { createScopeIndexes } from './scope-indexes.js';
import { createMemoryScopeIndexes, type MemoryScopeIndexes } from './memory-index/memory-scope-indexes.js';
import { loadGraphLibrary } from './memory-index/usearch-graph.js';
import { chooseSearchPlan, MIN_INDEXED_SCOPE_CHUNKS, wantsScopeIndex } from './search-plan.js';
import { assertSameEmbedding, documentInOtherScope, vectorStoreUnavailable } from './rag-errors.js';
import * as q from './rag-sql.js';
import type { DocumentInfo, IndexScopeOptions, IngestInput, IngestResult, RagStore, ReferenceChunk, RetrieveQuery, ScopeIndexStatus, SearchScope } from './types.js';
import { validateIngestInput, validateRetrieveQuery, validateScope } from './validate-input.js';
import { scopeIndexName, vectorShape, type VectorShape } from './vector-sql.js';
import { withTransaction } from '../core/db/transaction.js';

/**
 * The RAG store over pgvector. Design choices:
 * - Each collection records the embedding model and dimension of its first ingest; any other model is refused
 *   (EMBEDDING_MISMATCH), for ingest and retrieval alike.
 * - The dimension is taken from the vectors the embedder returns, so remote embedders whose dimension is only
 *   known after their first answer work without a probe call.
 * - Embedding happens before the write transaction, which stays short: PGlite has a single connection and
 *   every other query waits for it.
 * - Ingestion writes chunks outside any index, so it runs at the speed of embedding and one INSERT. The
 *   background ingest job then calls indexScope, which gives each large scope (scenario and collection) its own
 *   HNSW index and adds new chunks to it in short steps. retrieve() never builds: it searches a scope exactly
 *   until its index exists, then through the index plus an exact look at chunks not indexed yet (search-plan.ts).
 * - Where that index lives depends on the database: on the embedded one, a graph in this process's memory
 *   (memory-index/), since pgvector's HNSW runs as single-threaded WebAssembly inside PGlite; on a server database,
 *   pgvector's HNSW, shared by every process.
 * - Retrieval from a collection nothing was ingested into returns [] rather than NOT_FOUND: a scenario whose
 *   documents have not been uploaded yet is a normal state, not an error.
 */
/** The most candidates a query reads back from an in-process graph before it searches the scope exactly instead. */
const MAX_GRAPH_CANDIDATES = 5_000;

export function createRagStore(deps: {
  db: Db;
  embedder: Embedder;
  /** The scope size from which a scope gets an index; tests lower it to index a few hundred chunks. */
  indexFromChunks?: number;
  /**
   * On the embedded database, keep each scope's index as a graph in this process's memory (memory-index/) rather
   * than pgvector's HNSW inside PGlite (default true). A server database always uses pgvector: several processes
   * share it, and a graph in one process's memory would miss the others' writes.
   */
  inProcessGraphs?: boolean;
}): RagStore {
  const { db, embedder } = deps;
  const indexFromChunks = deps.indexFromChunks ?? MIN_INDEXED_SCOPE_CHUNKS;
  let vectorStore: { iterativeScan: boolean } | undefined;
  const statistics = createChunkStatistics();
  const indexes = createScopeIndexes();
  let embedded: boolean | undefined;
  let graphs: MemoryScopeIndexes | null | undefined;

  /** The in-process graphs when this store uses them (embedded database, usearch loaded), else null: pgvector. */
  async function inProcessGraphs(): Promise<MemoryScopeIndexes | null> {
    if (graphs !== undefined) return graphs;
    const library = deps.inProcessGraphs === false ? undefined : loadGraphLibrary().module;
    graphs = library && (embedded ??= await q.isEmbeddedDatabase(db)) ? createMemoryScopeIndexes(library) : null;
    return graphs;
  }

  async function requireVectorStore(): Promise<{ iterativeScan: boolean }> {
    // Only a positive answer is cached: pgvector may be installed and the database migrated while we run.
    if (vectorStore) return vectorStore;
    const version = await q.selectVectorStoreVersion(db);
    if (version === undefined) throw vectorStoreUnavailable();
    vectorStore = { iterativeScan: compareVersions(version, '0.8.0') >= 0 };
    return vectorStore;
  }

  async function embedChecked(texts: string[]): Promise<{ vectors: number[][]; dimension: number }> {
    const vectors = await embedder.embed(texts);
    const dimension = vectors[0]?.length ?? 0;
    if (vectors.length !== texts.length || dimension === 0 || vectors.some((vector) => vector.length !== dimension)) {
      throw new ClinAgentError('EMBEDDING_FAILED', `Embedder "${embedder.model}" returned ${vectors.length} vectors of inconsistent or zero dimension for ${texts.length} texts. Check the embedding endpoint and model.`, {
        model: embedder.model,
        expected: texts.length,
        received: vectors.length,
      });
    }
    return { vectors, dimension };
  }

  async function ingestDocument(input: IngestInput): Promise<IngestResult> {
    await requireVectorStore();
    validateIngestInput(input);
    const documentId = input.documentId ?? `doc_${randomUUID().replaceAll('-', '')}`;
    const contentHash = createHash('sha256').update(input.text, 'utf8').digest('hex');
    const scope = { scenarioId: input.scenarioId, collection: input.collection };

    const collection = await q.selectCollection(db, input.collection);
    if (collection) assertSameEmbedding(input.collection, toIdentity(collection), embedder);
    const existing = await q.selectDocument(db, documentId);
    if (existing && (existing.scenarioId !== input.scenarioId || existing.collection !== input.collection)) {
      throw documentInOtherScope(documentId, existing, scope);
    }
    if (existing && existing.contentHash === contentHash) {
      if (existing.sourceFile !== input.sourceFile) await q.updateSourceFile(db, documentId, input.sourceFile);
      return { documentId, chunks: existing.chunkCount, unchanged: true };
    }

    const chunks = chunkText(input.text);
    const { vectors, dimension } = await embedChecked(chunks.map((chunk) => chunk.content));
    const identity = { model: embedder.model, dimension };
    if (collection) assertSameEmbedding(input.collection, toIdentity(collection), identity);

    let replacedSeqs: number[] = [];
    await withTransaction(db, async (tx) => {
      await q.insertCollection(tx, { name: input.collection, embeddingModel: embedder.model, dimension });
      // Re-read: a concurrent first ingest with another model may have recorded the collection first.
      const recorded = await q.selectCollection(tx, input.collection);
      if (recorded) assertSameEmbedding(input.collection, toIdentity(recorded), identity);
      const isWritten = await q.upsertDocument(tx, { id: documentId, ...scope, sourceFile: input.sourceFile, contentHash, chunkCount: chunks.length });
      if (!isWritten) {
        const other = await q.selectDocument(tx, documentId);
        throw documentInOtherScope(documentId, other ?? scope, scope);
      }
      replacedSeqs = await q.deleteDocumentChunks(tx, documentId);
      await q.insertChunkRows(
        tx,
        chunks.map((chunk, i) => ({ documentId, chunkIndex: chunk.index, ...scope, content: chunk.content, start: chunk.start, end: chunk.end, embedding: vectors[i]! })),
      );
      // Documents belong to scenarios, not projects, so their entries go to the platform's chain.
      await appendAudit(tx, {
        projectId: PLATFORM_AUDIT_SCOPE,
        entityType: 'document',
        entityId: documentId,
        action: existing ? 'document.replace' : 'document.ingest',
        actor: input.actor ?? 'system',
        oldValue: existing ? { sourceFile: existing.sourceFile, contentHash: existing.contentHash, chunkCount: existing.chunkCount } : undefined,
        newValue: { ...scope, sourceFile: input.sourceFile, contentHash, chunkCount: chunks.length },
      });
    });
    if (replacedSeqs.length) (await inProcessGraphs())?.forget(scope, replacedSeqs);
    await statistics.noteChanges(db, chunks.length + (existing?.chunkCount ?? 0));
    return { documentId, chunks: chunks.length, unchanged: false };
  }

  async function scopeIndexExists(scope: SearchScope, shape: VectorShape): Promise<boolean> {
    const name = scopeIndexName(scope.collection, scope.scenarioId, shape.dimension);
    return name !== undefined && shape.cosineOps !== undefined && indexes.exists(db, name);
  }

  async function indexStatus(scope: SearchScope): Promise<ScopeIndexStatus> {
    await requireVectorStore();
    const collection = await q.selectCollection(db, scope.collection);
    const chunks = collection ? await q.selectScopeChunks(db, scope) : 0;
    const shape = collection && vectorShape(collection.dimension);
    const memory = await inProcessGraphs();
    let indexExists: boolean;
    let indexedChunks: number;
    if (memory) {
      const view = collection ? memory.view({ ...scope, dimension: collection.dimension }) : undefined;
      indexExists = view !== undefined;
      indexedChunks = view ? Math.max(0, chunks - (await q.countChunksAfter(db, { ...scope, afterSeq: view.watermark }))) : 0;
    } else {
      indexExists = shape ? await scopeIndexExists(scope, shape) : false;
      indexedChunks = indexExists ? Math.max(0, chunks - (await q.countUnindexedChunks(db, scope))) : 0;
    }
    return {
      ...scope,
      chunks,
      indexedChunks,
      percent: !indexExists ? 0 : chunks === 0 ? 100 : Math.floor((100 * indexedChunks) / chunks),
      state: !indexExists ? 'none' : indexedChunks < chunks ? 'extending' : 'ready',
      // As retrieve() chooses: a graph is used whatever the scope's size now (its answers are complete).
      search: memory ? (indexExists ? 'index' : 'exact') : chooseSearchPlan({ scopeChunks: chunks, searchedChunks: chunks, indexExists, topK: 1, indexFromChunks }).kind,
      index: memory ? 'in-process' : 'pgvector',
      indexFromChunks,
    };
  }

  async function indexScope(scope: SearchScope, options: IndexScopeOptions = {}): Promise<ScopeIndexStatus & { steps: number; longestStepMs: number }> {
    await requireVectorStore();
    validateScope(scope);
    const collection = await q.selectCollection(db, scope.collection);
    const shape = collection && vectorShape(collection.dimension);
    const report = async ({ flagged, remaining }: { flagged: number; remaining: number }) => {
      await options.onProgress?.({ added: flagged, toAdd: flagged + remaining, percent: Math.floor((100 * flagged) / (flagged + remaining)) });
    };
    const memory = await inProcessGraphs();
    if (memory) {
      if (!collection || !wantsScopeIndex(await q.selectScopeChunks(db, scope), indexFromChunks)) return { ...(await indexStatus(scope)), steps: 0, longestStepMs: 0 };
      const result = await memory.extend(db, { ...scope, dimension: collection.dimension }, report);
      return { ...(await indexStatus(scope)), steps: result.steps, longestStepMs: result.longestStepMs };
    }
    const name = shape?.cosineOps ? scopeIndexName(scope.collection, scope.scenarioId, shape.dimension) : undefined;
    if (!shape || !name || !wantsScopeIndex(await q.selectScopeChunks(db, scope), indexFromChunks)) return { ...(await indexStatus(scope)), steps: 0, longestStepMs: 0 };
    const result = await indexes.extend(db, { ...scope, name, shape }, report);
    if (result.flagged > 0 && (embedded ??= await q.isEmbeddedDatabase(db))) {
      const t0 = performance.now();
      await q.vacuumChunksWithoutIndexCleanup(db);
      // As long a wait as any step for whoever else needs PGlite's one connection.
      result.longestStepMs = Math.max(result.longestStepMs, performance.now() - t0);
    }
    return { ...(await indexStatus(scope)), steps: result.steps, longestStepMs: result.longestStepMs };
  }

  async function retrieve(query: RetrieveQuery): Promise<ReferenceChunk[]> {
    const { iterativeScan } = await requireVectorStore();
    const topK = validateRetrieveQuery(query);
    if (query.documentIds?.length === 0) return [];
    const collection = await q.selectCollection(db, query.collection);
    if (!collection) return [];
    const recorded = toIdentity(collection);
    assertSameEmbedding(query.collection, recorded, embedder);
    const { vectors, dimension } = await embedChecked([query.query]);
    assertSameEmbedding(query.collection, recorded, { model: embedder.model, dimension });
    const shape = vectorShape(dimension);
    const scope = { collection: query.collection, scenarioId: query.scenarioId };
    const search = { ...scope, shape, documentIds: query.documentIds, vector: vectors[0]!, topK };
    const memory = await inProcessGraphs();
    let rows: q.NearestChunkRow[];
    if (memory) {
      // A scope has a graph only once it was large enough, and a graph's answers are complete whatever the scope's
      // size now, so its size is not read. The graph has no document filter: named documents are searched exactly.
      const graph = query.documentIds === undefined ? memory.view({ ...scope, dimension }) : undefined;
      rows = graph ? await searchGraph(memory, { ...search, dimension }, graph.size) : await q.selectNearestChunks(db, q.exactNearestQuery(search));
    } else {
      const scopeChunks = await q.selectScopeChunks(db, scope);
      const searchedChunks = query.documentIds ? await q.selectScopeChunks(db, { ...scope, documentIds: query.documentIds }) : scopeChunks;
      // Only a search large enough for the index looks it up, so small scopes cost no catalogue query.
      const indexExists = wantsScopeIndex(searchedChunks, indexFromChunks) && (await scopeIndexExists(scope, shape));
      const plan = chooseSearchPlan({ scopeChunks, searchedChunks, indexExists, topK, indexFromChunks });
      rows =
        plan.kind === 'exact'
          ? await q.selectNearestChunks(db, q.exactNearestQuery(search))
          : await withTransaction(db, async (tx) => {
              await q.setIndexSearchParameters(tx, { efSearch: plan.efSearch, iterativeScan: iterativeScan && query.documentIds !== undefined });
              return q.selectNearestChunks(tx, q.indexedNearestQuery(search));
            });
    }
    return rows.map((row) => ({
      documentId: row.document_id,
      scenarioId: row.scenario_id,
      collection: row.collection,
      sourceFile: row.source_file,
      chunkId: `${row.document_id}#${row.chunk_index}`,
      chunkIndex: Number(row.chunk_index),
      content: row.content,
      score: 1 - Number(row.distance),
    }));
  }

  /**
   * The graph's candidates read back from the table with the chunks newer than the graph. Candidates deleted since
   * the graph took them are not found; when too few are left the graph is asked for more (deletes by another store
   * on the same database are the case: this store's own are forgotten by the graph at once).
   */
  async function searchGraph(memory: MemoryScopeIndexes, search: q.NearestSearch & { dimension: number }, graphSize: number): Promise<q.NearestChunkRow[]> {
    const scope = { collection: search.collection, scenarioId: search.scenarioId, dimension: search.dimension };
    for (let count = Math.max(2 * search.topK, search.topK + 10); ; count *= 4) {
      // A graph most of whose chunks are gone answers no better than the exact plan, and its candidates would
      // overflow one statement's parameters.
      const candidates = count <= MAX_GRAPH_CANDIDATES ? memory.candidates(scope, search.vector, count) : undefined;
      if (!candidates) return q.selectNearestChunks(db, q.exactNearestQuery(search));
      const rows = await q.selectNearestChunks<q.GraphNearestChunkRow>(db, q.graphNearestQuery({ ...search, candidates: candidates.seqs, watermark: candidates.watermark }));
      const live = rows.filter((row) => row.from_graph).length;
      if (live >= search.topK || candidates.seqs.length < count || count >= graphSize) return rows.slice(0, search.topK);
    }
  }

  return {
    ingestDocument,

    retrieve,

    indexScope,

    indexStatus,

    async deleteDocument(documentId, actor = 'system') {
      await requireVectorStore();
      const memory = await inProcessGraphs();
      let forget = () => {};
      const found = await withTransaction(db, async (tx) => {
        const seqs = await q.deleteDocumentChunks(tx, documentId);
        const deleted = await q.deleteDocumentRow(tx, documentId);
        if (!deleted) return false;
        forget = () => memory?.forget(deleted, seqs);
        await appendAudit(tx, {
          projectId: PLATFORM_AUDIT_SCOPE,
          entityType: 'document',
          entityId: documentId,
          action: 'document.delete',
          actor,
          oldValue: { scenarioId: deleted.scenarioId, collection: deleted.collection, sourceFile: deleted.sourceFile, contentHash: deleted.contentHash, chunkCount: deleted.chunkCount },
        });
        return true;
      });
      // After the commit: a rollback would have kept the chunks.
      forget();
      return found;
    },

    async listDocuments(filter = {}) {
      await requireVectorStore();
      return (await q.selectDocuments(db, filter)).map(toDocumentInfo);
    },

    async getDocument(documentId) {
      await requireVectorStore();
      const row = await q.selectDocument(db, documentId);
      return row && toDocumentInfo(row);
    },
  };
}

function toIdentity(collection: q.CollectionRow): { model: string; dimension: number } {
  return { model: collection.embeddingModel, dimension: collection.dimension };
}

function toDocumentInfo(row: q.DocumentRow): DocumentInfo {
  return {
    documentId: row.id,
    scenarioId: row.scenarioId,
    collection: row.collection,
    sourceFile: row.sourceFile,
    chunkCount: row.chunkCount,
    contentHash: row.contentHash,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Numeric comparison of dotted versions ("0.10.0" > "0.8.7"). */
function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((part) => parseInt(part, 10) || 0);
  const pb = b.split('.').map((part) => parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
