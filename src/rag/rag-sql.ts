import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../core/db/connect.js';
import { ragCollections, ragDocuments } from '../core/db/schema/rag.js';
import { collectionLiteral, scopeLiteral, vectorLiteral, type VectorShape } from './vector-sql.js';

/**
 * Every SQL statement RAG runs, one named function each. Functions take `db`, which may also be a
 * transaction. rag_chunks has no Drizzle table (it exists only where pgvector does), so its statements are raw.
 */

export interface CollectionRow {
  name: string;
  embeddingModel: string;
  dimension: number;
}

export type DocumentRow = typeof ragDocuments.$inferSelect;

export interface ChunkRow {
  documentId: string;
  chunkIndex: number;
  scenarioId: string;
  collection: string;
  content: string;
  start: number;
  end: number;
  embedding: readonly number[];
}

export interface NearestChunkRow {
  document_id: string;
  chunk_index: number;
  content: string;
  distance: number;
  scenario_id: string;
  collection: string;
  source_file: string;
}

/** pgvector's version when rag_chunks exists, undefined on a server without pgvector. */
export async function selectVectorStoreVersion(db: Db): Promise<string | undefined> {
  const [row] = await queryRows<{ present: boolean; version: string | null }>(
    db,
    sql`SELECT to_regclass('rag_chunks') IS NOT NULL AS present, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS version`,
  );
  return row?.present ? (row.version ?? '0') : undefined;
}

export async function selectCollection(db: Db, name: string): Promise<CollectionRow | undefined> {
  const [row] = await db
    .select({ name: ragCollections.name, embeddingModel: ragCollections.embeddingModel, dimension: ragCollections.dimension })
    .from(ragCollections)
    .where(eq(ragCollections.name, name));
  return row;
}

/** Records the collection's model unless a concurrent ingest already did; the caller re-reads to compare. */
export async function insertCollection(db: Db, row: CollectionRow): Promise<void> {
  await db.insert(ragCollections).values(row).onConflictDoNothing({ target: ragCollections.name });
}

export async function indexExists(db: Db, indexName: string): Promise<boolean> {
  const [row] = await queryRows<{ present: boolean }>(db, sql`SELECT to_regclass(${indexName}) IS NOT NULL AS present`);
  return row?.present === true;
}

/**
 * A scope's size in chunks, from its documents' chunk_count (rag_documents_scope_idx): a few hundred rows to
 * read where counting rag_chunks would read tens of thousands. With `documentIds`, only those documents.
 */
export async function selectScopeChunks(db: Db, scope: { collection: string; scenarioId: string; documentIds?: readonly string[] }): Promise<number> {
  const inDocuments = scope.documentIds ? sql` AND id IN (${sql.join(scope.documentIds.map((id) => sql`${id}`), sql`, `)})` : sql``;
  const [row] = await queryRows<{ n: number | string | null }>(
    db,
    sql`SELECT sum(chunk_count)::int AS n FROM rag_documents WHERE collection = ${scope.collection} AND scenario_id = ${scope.scenarioId}${inDocuments}`,
  );
  return Number(row?.n ?? 0);
}

/** Chunks of the scope not yet in its index (rag_chunks_unindexed_idx, small once the ingest job has caught up). */
export async function countUnindexedChunks(db: Db, scope: { collection: string; scenarioId: string }): Promise<number> {
  const [row] = await queryRows<{ n: number | string }>(db, sql`SELECT count(*)::int AS n FROM rag_chunks WHERE collection = ${scope.collection} AND scenario_id = ${scope.scenarioId} AND NOT indexed`);
  return Number(row?.n ?? 0);
}

/**
 * Through a function the migrating role owns (migration 0016): only the owner of rag_chunks may index it, and on
 * PostgreSQL the application runs as a role that owns nothing (docs/database-roles.md). The function builds
 * `CREATE INDEX ... USING hnsw ((embedding::<type>) <opclass>) WITH (m = 16, ef_construction = 64) WHERE
 * collection = '<collection>' AND scenario_id = '<scenario>' AND indexed`, which indexedNearestQuery matches.
 * Created before any of the scope's chunks is flagged, it is empty and returns at once.
 */
export async function createScopeIndex(db: Db, index: { name: string; collection: string; scenarioId: string; shape: VectorShape }): Promise<void> {
  await db.execute(sql`SELECT clinagent_create_scope_index(${index.name}, ${index.collection}, ${index.scenarioId}, ${index.shape.type}, ${index.shape.cosineOps ?? ''})`);
}

/**
 * Flags up to `limit` of the scope's unindexed chunks, which inserts them into its HNSW index; returns how many.
 * SKIP LOCKED lets two workers extend one scope at once without waiting on each other's rows.
 */
export async function flagChunksIndexed(db: Db, scope: { collection: string; scenarioId: string; limit: number }): Promise<number> {
  const [row] = await queryRows<{ n: number | string }>(
    db,
    sql`WITH flagged AS (
      UPDATE rag_chunks SET indexed = true
      WHERE (document_id, chunk_index) IN (
        SELECT document_id, chunk_index FROM rag_chunks
        WHERE collection = ${scope.collection} AND scenario_id = ${scope.scenarioId} AND NOT indexed
        LIMIT ${scope.limit} FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM flagged`,
  );
  return Number(row?.n ?? 0);
}

export async function selectDocument(db: Db, documentId: string): Promise<DocumentRow | undefined> {
  const [row] = await db.select().from(ragDocuments).where(eq(ragDocuments.id, documentId));
  return row;
}

export async function selectDocuments(db: Db, filter: { scenarioId?: string }): Promise<DocumentRow[]> {
  return db
    .select()
    .from(ragDocuments)
    .where(filter.scenarioId === undefined ? undefined : eq(ragDocuments.scenarioId, filter.scenarioId))
    .orderBy(desc(ragDocuments.updatedAt), ragDocuments.id);
}

/**
 * Inserts or replaces the document row, and locks it until the transaction ends so two ingests of one
 * document take turns. Returns false, changing nothing, when the id belongs to another scenario or
 * collection: the check and the write are one statement, so a concurrent ingest cannot slip between them.
 */
export async function upsertDocument(db: Db, row: { id: string; scenarioId: string; collection: string; sourceFile: string; contentHash: string; chunkCount: number }): Promise<boolean> {
  const written = await db
    .insert(ragDocuments)
    .values(row)
    .onConflictDoUpdate({
      target: ragDocuments.id,
      set: { sourceFile: row.sourceFile, contentHash: row.contentHash, chunkCount: row.chunkCount, updatedAt: sql`now()` },
      setWhere: and(eq(ragDocuments.scenarioId, row.scenarioId), eq(ragDocuments.collection, row.collection)),
    })
    .returning({ id: ragDocuments.id });
  return written.length > 0;
}

export async function updateSourceFile(db: Db, documentId: string, sourceFile: string): Promise<void> {
  await db.update(ragDocuments).set({ sourceFile, updatedAt: sql`now()` }).where(eq(ragDocuments.id, documentId));
}

/** Chunks go with it (ON DELETE CASCADE). Returns the deleted row, for the audit trail. */
export async function deleteDocumentRow(db: Db, documentId: string): Promise<DocumentRow | undefined> {
  const [deleted] = await db.delete(ragDocuments).where(eq(ragDocuments.id, documentId)).returning();
  return deleted;
}

/** Returns the deleted chunks' seq, for the in-process graphs that hold them (memory-index/). */
export async function deleteDocumentChunks(db: Db, documentId: string): Promise<number[]> {
  const rows = await queryRows<{ seq: number | string }>(db, sql`DELETE FROM rag_chunks WHERE document_id = ${documentId} RETURNING seq`);
  return rows.map((row) => Number(row.seq));
}

const CHUNK_COLUMNS = 8;
/** PostgreSQL's bind-parameter limit per statement. */
const MAX_PARAMETERS = 65_535;
/** Keeps one statement near 2 MB: large enough to amortise round trips, small enough for PGlite's memory. */
const TARGET_STATEMENT_BYTES = 2_000_000;

/** Multi-row INSERTs sized by parameter count and bytes, so 100k chunks take a few hundred statements. */
export async function insertChunkRows(db: Db, rows: readonly ChunkRow[]): Promise<void> {
  if (rows.length === 0) return;
  const dimension = rows[0]!.embedding.length;
  const bytesPerRow = 3 * 1000 + 10 * dimension; // ~1000 characters of (often CJK) text plus the vector text
  const rowsPerStatement = Math.max(1, Math.min(Math.floor(MAX_PARAMETERS / CHUNK_COLUMNS), Math.floor(TARGET_STATEMENT_BYTES / bytesPerRow)));
  for (let i = 0; i < rows.length; i += rowsPerStatement) {
    const values = rows
      .slice(i, i + rowsPerStatement)
      .map((r) => sql`(${r.documentId}, ${r.chunkIndex}, ${r.scenarioId}, ${r.collection}, ${r.content}, ${r.start}, ${r.end}, ${vectorLiteral(r.embedding)}::vector)`);
    await db.execute(
      sql`INSERT INTO rag_chunks (document_id, chunk_index, scenario_id, collection, content, start_offset, end_offset, embedding) VALUES ${sql.join(values, sql`, `)}`,
    );
  }
}

/** The planner's row estimate for rag_chunks; -1 until the table is first analysed. */
export async function selectEstimatedChunkRows(db: Db): Promise<number> {
  const [row] = await queryRows<{ estimate: number | string }>(db, sql`SELECT reltuples AS estimate FROM pg_class WHERE oid = 'rag_chunks'::regclass`);
  return Number(row?.estimate ?? -1);
}

/** Whether this is the embedded database (PGlite), which runs no autovacuum. */
export async function isEmbeddedDatabase(db: Db): Promise<boolean> {
  const [row] = await queryRows<{ embedded: boolean }>(db, sql`SELECT version() LIKE '%PGlite%' AS embedded`);
  return row?.embedded === true;
}

/**
 * Frees the row versions flagging left behind (each flag is an UPDATE). Without it PGlite, which has no
 * autovacuum, keeps them: the table doubles in memory and an exact scan of it got four times slower in the bench.
 * INDEX_CLEANUP OFF: the old versions were never in an HNSW index, and vacuuming those indexes would read them
 * whole, a stall of seconds on PGlite's one connection; only the b-trees keep a few dead pointers until the next
 * full vacuum. Embedded database only (its one role owns the table); a server's autovacuum does this there.
 */
export async function vacuumChunksWithoutIndexCleanup(db: Db): Promise<void> {
  await db.execute(sql`VACUUM (INDEX_CLEANUP OFF) rag_chunks`);
}

/** Through the owner's function (migration 0005): ANALYZE too is for the table's owner. */
export async function analyzeChunks(db: Db): Promise<void> {
  await db.execute(sql`SELECT clinagent_analyze_rag_chunks()`);
}

/**
 * Settings for the index search that follows in the same transaction (is_local: they end with it), in one round
 * trip. The plan was chosen by the scope's size (search-plan.ts), so the planner is held to it: with sequential and
 * bitmap scans and sorts priced out, the scope's HNSW index is the only way left to the indexed part.
 * `iterativeScan` (pgvector 0.8+) lets HNSW keep walking the graph until a document filter has let `LIMIT` rows
 * through; a search of the whole scope has no filter to pass and is ~1 ms faster without it (bench/rag.bench.ts).
 */
export async function setIndexSearchParameters(db: Db, settings: { efSearch: number; iterativeScan: boolean }): Promise<void> {
  // Named only when wanted: pgvector before 0.8 has no such setting.
  const iterative = settings.iterativeScan ? sql`, set_config('hnsw.iterative_scan', 'relaxed_order', true)` : sql``;
  await db.execute(sql`SELECT set_config('hnsw.ef_search', ${String(Math.round(settings.efSearch))}, true)${iterative},
    set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`);
}

export interface NearestSearch {
  collection: string;
  shape: VectorShape;
  scenarioId: string;
  documentIds?: readonly string[];
  vector: readonly number[];
  topK: number;
}

function distanceTo(search: NearestSearch): SQL {
  const type = sql.raw(search.shape.type);
  return sql`embedding::${type} <=> ${vectorLiteral(search.vector)}::${type}`;
}

function inDocuments(search: NearestSearch): SQL {
  return search.documentIds ? sql` AND document_id IN (${sql.join(search.documentIds.map((id) => sql`${id}`), sql`, `)})` : sql``;
}

/**
 * The nearest chunks with their document's file name; the final sort repairs relaxed_order's slight misordering.
 * The file name is a lookup by primary key per row (a chunk's document always exists: ON DELETE CASCADE), where a
 * join let the planner hash the whole document table for a dozen rows (2 ms at 2 000 documents on PGlite, whose
 * statistics for it are never refreshed: it runs no autovacuum).
 */
function withDocuments(nearest: SQL, topK: number | undefined, extraColumns: SQL = sql``): SQL {
  // The `+ 0` stops PostgreSQL 17 (PGlite) from trusting an index's order and only sorting ties (an
  // Incremental Sort), which would keep the misordering.
  return sql`WITH nearest AS MATERIALIZED (${nearest})
  SELECT n.document_id, n.chunk_index, n.content, n.distance, n.scenario_id, n.collection${extraColumns},
    (SELECT d.source_file FROM rag_documents d WHERE d.id = n.document_id) AS source_file
  FROM nearest n
  ORDER BY n.distance + 0, n.document_id, n.chunk_index${topK === undefined ? sql`` : sql`
  LIMIT ${topK}`}`;
}

/**
 * The exact plan: every chunk of the scope compared, through the scope b-tree (rag_chunks_scope_idx) or a
 * sequential scan as the planner's statistics say (chunk-statistics.ts). Recall 1 by construction.
 */
export function exactNearestQuery(search: NearestSearch): SQL {
  return withDocuments(
    sql`SELECT document_id, chunk_index, content, scenario_id, collection, ${distanceTo(search)} AS distance
    FROM rag_chunks
    WHERE collection = ${search.collection} AND scenario_id = ${search.scenarioId}${inDocuments(search)}
    ORDER BY distance
    LIMIT ${search.topK}`,
    search.topK,
  );
}

/**
 * The index plan, one statement so one snapshot: the scope's indexed chunks through its partial HNSW index (the
 * WHERE repeats the index's predicate as literals, the ORDER BY its expression), and the chunks the ingest job
 * has not indexed yet compared exactly (rag_chunks_unindexed_idx). A chunk moved between the parts by a
 * concurrent batch is seen in exactly one of them.
 */
export function indexedNearestQuery(search: NearestSearch): SQL {
  const inScope = sql.raw(`collection = ${collectionLiteral(search.collection)} AND scenario_id = ${scopeLiteral(search.scenarioId)}`);
  return withDocuments(
    sql`(SELECT document_id, chunk_index, content, scenario_id, collection, ${distanceTo(search)} AS distance
      FROM rag_chunks WHERE ${inScope} AND indexed${inDocuments(search)}
      ORDER BY distance LIMIT ${search.topK})
    UNION ALL
    (SELECT document_id, chunk_index, content, scenario_id, collection, ${distanceTo(search)} AS distance
      FROM rag_chunks WHERE ${inScope} AND NOT indexed${inDocuments(search)}
      ORDER BY distance LIMIT ${search.topK})`,
    search.topK,
  );
}

export async function selectNearestChunks<Row extends NearestChunkRow = NearestChunkRow>(db: Db, query: SQL): Promise<Row[]> {
  return queryRows<Row>(db, query);
}

/**
 * The scope's chunks written after `afterSeq`, oldest first, with their vectors: what an in-process graph adds next
 * (rag_chunks_scope_seq_idx, migration 0018).
 */
export async function selectChunkVectorsAfter(db: Db, scope: { collection: string; scenarioId: string; afterSeq: number; limit: number }): Promise<Array<{ seq: number; embedding: string }>> {
  const rows = await queryRows<{ seq: number | string; embedding: string }>(
    db,
    sql`SELECT seq, embedding::text AS embedding FROM rag_chunks
    WHERE collection = ${scope.collection} AND scenario_id = ${scope.scenarioId} AND seq > ${scope.afterSeq}
    ORDER BY seq LIMIT ${scope.limit}`,
  );
  return rows.map((row) => ({ seq: Number(row.seq), embedding: row.embedding }));
}

/** How many of the scope's chunks were written after `afterSeq`: those its in-process graph does not hold yet. */
export async function countChunksAfter(db: Db, scope: { collection: string; scenarioId: string; afterSeq: number }): Promise<number> {
  const [row] = await queryRows<{ n: number | string }>(
    db,
    sql`SELECT count(*)::int AS n FROM rag_chunks WHERE collection = ${scope.collection} AND scenario_id = ${scope.scenarioId} AND seq > ${scope.afterSeq}`,
  );
  return Number(row?.n ?? 0);
}

export interface GraphNearestChunkRow extends NearestChunkRow {
  /** Whether the row is one of the graph's candidates (else it came from the exact look at newer chunks). */
  from_graph: boolean;
}

/**
 * The in-process graph's plan, one statement so one snapshot: the graph's candidates (by seq) that still exist in
 * the scope, and the scope's chunks newer than the graph (seq above its watermark) compared exactly. Distances are
 * computed here for both, so scores are those of the exact plan; a candidate deleted since the graph took it is
 * simply not found.
 */
export function graphNearestQuery(search: NearestSearch & { candidates: readonly number[]; watermark: number }): SQL {
  const inScope = sql`collection = ${search.collection} AND scenario_id = ${search.scenarioId}`;
  const columns = sql`document_id, chunk_index, content, scenario_id, collection, ${distanceTo(search)} AS distance`;
  const candidates = search.candidates.length
    ? sql`(SELECT ${columns}, true AS from_graph
      FROM rag_chunks WHERE ${inScope} AND seq IN (${sql.join(search.candidates.map((seq) => sql`${seq}`), sql`, `)}))
    UNION ALL `
    : sql``;
  // Not limited to topK: the caller counts the graph's candidates that still exist.
  return withDocuments(
    sql`${candidates}(SELECT ${columns}, false AS from_graph
      FROM rag_chunks WHERE ${inScope} AND seq > ${search.watermark}
      ORDER BY distance LIMIT ${search.topK})`,
    undefined,
    sql`, n.from_graph`,
  );
}
