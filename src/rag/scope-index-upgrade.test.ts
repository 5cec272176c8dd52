import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { migrationsFolder } from '../core/paths.js';
import { TEST_AUDIT_KEY } from '../testing/test-database.js';
import { createLocalEmbedder } from './local-embedder.js';
import * as q from './rag-sql.js';
import { createRagStore } from './rag-store.js';
import { scopeIndexName } from './vector-sql.js';

/**
 * The upgrade path of migration 0016 on an installation that used the collection-wide HNSW indexes: a database
 * migrated by drizzle's own migrator up to 0015 (a copy of the migrations folder whose journal ends there), given
 * chunks and the collection index the pre-0016 store built through clinagent_create_collection_index (0005), then
 * migrated to the latest. PGlite only: the machine's PostgreSQL has no pgvector.
 */
const LAST_BEFORE = '0015_data_manager_role';
const COLLECTION = 'upgrade-test';
const LARGE = { scenarioId: 'large-scenario', collection: COLLECTION };
const SMALL = { scenarioId: 'small-scenario', collection: COLLECTION };
const INDEX_FROM = 40;
const QUESTIONS = ['ALT above three times the upper limit pauses dosing', 'visit window of three days', 'serious adverse event within 24 hours', 'HbA1c at baseline'];

const embedder = createLocalEmbedder();
let database: Database;
let folder: string;

/** As the pre-0016 store named it (collectionIndexName, removed with 0016). */
const oldIndexName = `rag_hnsw_${COLLECTION.replace(/[^a-z0-9_]/g, '_')}_${createHash('sha256').update(`${COLLECTION}\0${embedder.dimension}`).digest('hex').slice(0, 12)}`;

function texts(count: number, seed: number): string[] {
  const words = 'ALT AST upper limit pauses dosing visit window days serious adverse event hours HbA1c baseline endpoint patient dose blood pressure heart rate deviation 受试者 访视 给药 暂停 肝功能'.split(' ');
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Array.from({ length: 30 }, () => words[Math.floor(random() * words.length)]).join(' '));
}

/** Chunks written as the pre-0016 store wrote them (no `indexed` column yet). */
async function load(scope: { scenarioId: string }, documentId: string, contents: string[]): Promise<void> {
  const vectors = await embedder.embed(contents);
  await q.upsertDocument(database.db, { id: documentId, scenarioId: scope.scenarioId, collection: COLLECTION, sourceFile: `${documentId}.md`, contentHash: documentId, chunkCount: contents.length });
  await q.insertChunkRows(database.db, contents.map((content, i) => ({ documentId, chunkIndex: i, scenarioId: scope.scenarioId, collection: COLLECTION, content, start: 0, end: content.length, embedding: vectors[i]! })));
}

/** The nearest chunks by SQL over the table (exact while no vector index exists): what retrieve() must answer. */
async function exactNearest(scope: { scenarioId: string }, question: string, topK: number): Promise<string[]> {
  const [vector] = await embedder.embed([question]);
  const rows = await queryRows<{ id: string }>(
    database.db,
    sql`SELECT document_id || '#' || chunk_index AS id FROM rag_chunks WHERE collection = ${COLLECTION} AND scenario_id = ${scope.scenarioId}
        ORDER BY embedding::vector(${sql.raw(String(embedder.dimension))}) <=> ${`[${vector!.join(',')}]`}::vector(${sql.raw(String(embedder.dimension))}), document_id, chunk_index LIMIT ${topK}`,
  );
  return rows.map((row) => row.id);
}

async function ragIndexes(): Promise<string[]> {
  const rows = await queryRows<{ indexname: string }>(database.db, sql`SELECT indexname FROM pg_indexes WHERE tablename = 'rag_chunks' AND (indexname LIKE 'rag_hnsw_%' OR indexname LIKE 'rag_scope_%') ORDER BY indexname`);
  return rows.map((row) => row.indexname);
}

describe('migration 0016 on a database with a collection-wide HNSW index', () => {
  const before = new Map<string, string[]>();
  let chunkCount = 0;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'clinagent-migrations-0015-'));
    cpSync(migrationsFolder(), folder, { recursive: true });
    const journalFile = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
    const last = journal.entries.findIndex((entry) => entry.tag === LAST_BEFORE);
    expect(last, `${LAST_BEFORE} in the journal`).toBeGreaterThan(0);
    writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, last + 1) }));

    database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
    await migrate(database.db as unknown as PgliteDatabase, { migrationsFolder: folder });
    const [column] = await queryRows<{ present: boolean }>(database.db, sql`SELECT count(*) > 0 AS present FROM information_schema.columns WHERE table_name = 'rag_chunks' AND column_name = 'indexed'`);
    expect(column?.present, 'rag_chunks.indexed before 0016').toBe(false);

    await q.insertCollection(database.db, { name: COLLECTION, embeddingModel: embedder.model, dimension: embedder.dimension });
    await load(LARGE, 'large-1', texts(50, 11));
    await load(LARGE, 'large-2', texts(40, 23));
    await load(SMALL, 'small-1', texts(12, 37));
    // Before the old index exists, so these are exact: through it, the small scope's answers came back short
    // (the scenario filter applied after the index scan), which is what 0016 ends.
    for (const scope of [LARGE, SMALL]) for (const question of QUESTIONS) before.set(`${scope.scenarioId} ${question}`, await exactNearest(scope, question, 5));
    await database.db.execute(sql`SELECT clinagent_create_collection_index(${oldIndexName}, ${COLLECTION}, ${`vector(${embedder.dimension})`}, 'vector_cosine_ops')`);
    expect(await ragIndexes()).toEqual([oldIndexName]);
    [{ n: chunkCount }] = (await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM rag_chunks`)) as [{ n: number }];

    await runMigrations(database);
  });

  afterAll(async () => {
    await database?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('drops the old index and keeps every chunk, flagged unindexed', async () => {
    expect(await ragIndexes()).toEqual([]);
    const [row] = await queryRows<{ n: number; unindexed: number }>(database.db, sql`SELECT count(*)::int AS n, count(*) FILTER (WHERE NOT indexed)::int AS unindexed FROM rag_chunks`);
    expect(row).toEqual({ n: chunkCount, unindexed: chunkCount });
    expect(chunkCount).toBe(102);
  });

  it('answers as before, exactly, then builds the scope index on indexScope and answers the same through it', async () => {
    const store = createRagStore({ db: database.db, embedder, indexFromChunks: INDEX_FROM, inProcessGraphs: false });
    const answer = async (scope: typeof LARGE, question: string) => (await store.retrieve({ ...scope, query: question, topK: 5 })).map((chunk) => chunk.chunkId);

    expect(await store.indexStatus(LARGE)).toMatchObject({ chunks: 90, indexedChunks: 0, state: 'none', search: 'exact' });
    for (const scope of [LARGE, SMALL]) for (const question of QUESTIONS) expect(await answer(scope, question), `${scope.scenarioId}: ${question}`).toEqual(before.get(`${scope.scenarioId} ${question}`));

    expect(await store.indexScope(LARGE)).toMatchObject({ chunks: 90, indexedChunks: 90, percent: 100, state: 'ready', search: 'index' });
    // The small scope stays below the threshold: no index, searched exactly.
    expect(await store.indexScope(SMALL)).toMatchObject({ chunks: 12, state: 'none', search: 'exact' });
    expect(await ragIndexes()).toEqual([scopeIndexName(COLLECTION, LARGE.scenarioId, embedder.dimension)]);
    // 90 points in a graph of m = 16: the index finds the exact neighbours.
    for (const scope of [LARGE, SMALL]) for (const question of QUESTIONS) expect(await answer(scope, question), `${scope.scenarioId}: ${question}`).toEqual(before.get(`${scope.scenarioId} ${question}`));
  });
});
