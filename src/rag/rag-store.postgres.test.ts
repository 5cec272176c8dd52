import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../core/db/connect.js';
import { hasVectorStore, runMigrations } from '../core/db/migrate.js';
import { createThrowawayDatabase } from '../testing/test-database.js';
import { createLocalEmbedder } from './local-embedder.js';
import { createRagStore } from './rag-store.js';

/**
 * A PostgreSQL server without pgvector (TEST_DATABASE_URL, e.g. postgres://root@127.0.0.1:5432/test on
 * PostgreSQL 15 without the extension): migrations succeed but create no rag_chunks, and every RAG call must
 * say how to get pgvector rather than fail with an SQL error.
 */
const serverUrl = process.env.TEST_DATABASE_URL;

describe.runIf(serverUrl)('createRagStore on PostgreSQL without pgvector', () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const throwaway = await createThrowawayDatabase(serverUrl!);
    drop = throwaway.drop;
    database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 2 });
    await runMigrations(database);
  });

  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it('throws VECTOR_STORE_UNAVAILABLE from every method, saying how to install pgvector', async (context) => {
    if (await hasVectorStore(database.db)) context.skip(); // this server has pgvector: nothing to check here
    const store = createRagStore({ db: database.db, embedder: createLocalEmbedder() });
    const expected = {
      code: 'VECTOR_STORE_UNAVAILABLE',
      message:
        'This PostgreSQL database has no pgvector extension, so RAG is unavailable. Install pgvector on the server (e.g. apt-get install postgresql-15-pgvector) and create a fresh database, or use the embedded database (unset DATABASE_URL).',
    };
    await expect(store.ingestDocument({ scenarioId: 's', sourceFile: 'a.md', text: '入组标准', collection: 'c' })).rejects.toMatchObject(expected);
    await expect(store.retrieve({ scenarioId: 's', query: '入组', collection: 'c' })).rejects.toMatchObject(expected);
    await expect(store.deleteDocument('doc_1')).rejects.toMatchObject(expected);
    await expect(store.listDocuments()).rejects.toMatchObject(expected);
    await expect(store.getDocument('doc_1')).rejects.toMatchObject(expected);
  });
});
