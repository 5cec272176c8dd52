import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../core/db/connect.js';
import { TEST_AUDIT_KEY } from '../testing/test-database.js';
import { runMigrations } from '../core/db/migrate.js';
import type { Embedder } from '../core/embeddings.js';
import { ClinAgentError } from '../core/errors.js';
import { createLocalEmbedder } from './local-embedder.js';
import { createRagStore } from './rag-store.js';
import type { RagStore } from './types.js';

/** A protocol with one topic per ~1000-character section, so each chunk is about one thing. */
const TOPICS = {
  eligibility: '入组标准：年龄18至65岁的成年受试者，确诊二型糖尿病至少六个月，筛选期糖化血红蛋白在百分之七至百分之十之间，并签署知情同意书。',
  liver: '肝功能异常处理：若谷丙转氨酶或谷草转氨酶超过正常值上限三倍，研究者应立即暂停给药，七十二小时内复查肝功能，并按严重不良事件流程上报。',
  visits: '访视窗口：随机化后第七天进行第一次访视，窗口为加减两天；第四周访视窗口为加减三天，超出窗口的访视记为方案偏离并在病例报告表中注明原因。',
  english: 'Concomitant medication: record every concomitant medication with its name, dose, route and start and stop dates. Strong CYP3A4 inhibitors are prohibited during the treatment period.',
};
const section = (text: string) => `${text}\n`.repeat(Math.ceil(950 / text.length));
const PROTOCOL = Object.values(TOPICS).map(section).join('\n');

let database: Database;
let store: RagStore;
const local = createLocalEmbedder();

beforeAll(async () => {
  database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  await runMigrations(database);
  store = createRagStore({ db: database.db, embedder: local });
});

afterAll(async () => {
  await database.close();
});

/** Wraps the real local embedder to count texts embedded, or to fail on demand. */
function instrumented(inner: Embedder, options: { model?: string; fail?: boolean } = {}) {
  const state = { texts: 0 };
  const embedder: Embedder = {
    model: options.model ?? inner.model,
    dimension: inner.dimension,
    async embed(texts) {
      if (options.fail) throw new ClinAgentError('EMBEDDING_FAILED', 'embedding endpoint down');
      state.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return { embedder, state };
}

describe('createRagStore', () => {
  it('ingests a document and retrieves the chunk about the question, with its citation metadata', async () => {
    const result = await store.ingestDocument({ documentId: 'proto-1', scenarioId: 'protocol-qa', sourceFile: 'protocol.md', text: PROTOCOL, collection: 'protocols' });
    expect(result).toEqual({ documentId: 'proto-1', chunks: expect.any(Number), unchanged: false });
    expect(result.chunks).toBeGreaterThanOrEqual(4);

    const hits = await store.retrieve({ scenarioId: 'protocol-qa', query: '谷丙转氨酶升高时是否暂停给药？', collection: 'protocols', topK: 3 });
    expect(hits).toHaveLength(3);
    expect(hits[0]).toMatchObject({ documentId: 'proto-1', scenarioId: 'protocol-qa', collection: 'protocols', sourceFile: 'protocol.md' });
    expect(hits[0]!.content).toContain('谷丙转氨酶');
    expect(hits[0]!.chunkId).toBe(`proto-1#${hits[0]!.chunkIndex}`);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    expect(hits[0]!.score).toBeGreaterThan(0);
    expect(hits[0]!.score).toBeLessThanOrEqual(1);

    const english = await store.retrieve({ scenarioId: 'protocol-qa', query: 'Which CYP3A4 inhibitors are prohibited?', collection: 'protocols', topK: 1 });
    expect(english[0]!.content).toContain('CYP3A4');
  });

  it('records the embedding model and dimension on the collection', async () => {
    const rows = await queryRows(database.db, sql`SELECT embedding_model, dimension FROM rag_collections WHERE name = 'protocols'`);
    expect(rows).toEqual([{ embedding_model: 'local-hash-ngram-v1', dimension: 256 }]);
  });

  it('gives a new document a random doc_ id and lists, gets and deletes it', async () => {
    const { documentId } = await store.ingestDocument({ scenarioId: 'listing', sourceFile: 'a.txt', text: TOPICS.visits, collection: 'listing' });
    expect(documentId).toMatch(/^doc_[0-9a-f]{32}$/);
    const info = await store.getDocument(documentId);
    expect(info).toEqual({ documentId, scenarioId: 'listing', collection: 'listing', sourceFile: 'a.txt', chunkCount: 1, contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), updatedAt: expect.any(String) });
    expect(new Date(info!.updatedAt).toISOString()).toBe(info!.updatedAt);
    expect(await store.listDocuments({ scenarioId: 'listing' })).toEqual([info]);
    expect((await store.listDocuments()).map((d) => d.documentId)).toContain('proto-1');

    expect(await store.deleteDocument(documentId)).toBe(true);
    expect(await store.deleteDocument(documentId)).toBe(false);
    expect(await store.getDocument(documentId)).toBeUndefined();
    expect(await store.retrieve({ scenarioId: 'listing', query: '访视窗口', collection: 'listing' })).toEqual([]);
  });

  it('replaces the chunks of a re-ingested document and skips re-embedding unchanged text', async () => {
    const { embedder, state } = instrumented(local);
    const counted = createRagStore({ db: database.db, embedder });
    const input = { documentId: 'replace-me', scenarioId: 'replace', sourceFile: 'v1.md', text: section(TOPICS.liver), collection: 'replace' };
    await counted.ingestDocument(input);
    const embeddedFirst = state.texts;

    const again = await counted.ingestDocument({ ...input, sourceFile: 'v1-renamed.md' });
    expect(again).toEqual({ documentId: 'replace-me', chunks: embeddedFirst, unchanged: true });
    expect(state.texts).toBe(embeddedFirst);
    expect((await counted.getDocument('replace-me'))!.sourceFile).toBe('v1-renamed.md');

    const v2 = await counted.ingestDocument({ ...input, sourceFile: 'v2.md', text: TOPICS.english });
    expect(v2).toEqual({ documentId: 'replace-me', chunks: 1, unchanged: false });
    const chunks = await queryRows<{ content: string }>(database.db, sql`SELECT content FROM rag_chunks WHERE document_id = 'replace-me'`);
    expect(chunks).toEqual([{ content: TOPICS.english }]);
    const hits = await counted.retrieve({ scenarioId: 'replace', query: '谷丙转氨酶', collection: 'replace', topK: 5 });
    expect(hits.map((h) => [h.chunkId, h.sourceFile])).toEqual([['replace-me#0', 'v2.md']]);
  });

  it('keeps the old chunks when embedding the new version fails', async () => {
    const input = { documentId: 'keep-me', scenarioId: 'keep', sourceFile: 'v1.md', text: TOPICS.liver, collection: 'keep' };
    await store.ingestDocument(input);
    const broken = createRagStore({ db: database.db, embedder: instrumented(local, { fail: true }).embedder });
    await expect(broken.ingestDocument({ ...input, text: TOPICS.visits })).rejects.toMatchObject({ code: 'EMBEDDING_FAILED' });
    const hits = await store.retrieve({ scenarioId: 'keep', query: '肝功能', collection: 'keep' });
    expect(hits.map((h) => h.content)).toEqual([TOPICS.liver]);
  });

  it('refuses to move a document id to another scenario or collection', async () => {
    await store.ingestDocument({ documentId: 'owned', scenarioId: 'owner', sourceFile: 'a.md', text: TOPICS.visits, collection: 'owned' });
    for (const other of [{ scenarioId: 'thief', collection: 'owned' }, { scenarioId: 'owner', collection: 'elsewhere' }]) {
      const attempt = store.ingestDocument({ documentId: 'owned', sourceFile: 'b.md', text: TOPICS.liver, ...other });
      await expect(attempt).rejects.toMatchObject({ code: 'CONFLICT_STATE', message: expect.stringContaining('already belongs to scenario "owner"') });
    }
    expect(await store.getDocument('owned')).toMatchObject({ scenarioId: 'owner', collection: 'owned', sourceFile: 'a.md' });
  });

  it('lets only one of two concurrent first ingests of one document id into different scenarios win', async () => {
    const results = await Promise.allSettled([
      store.ingestDocument({ documentId: 'race', scenarioId: 'race-a', sourceFile: 'a.md', text: TOPICS.visits, collection: 'race' }),
      store.ingestDocument({ documentId: 'race', scenarioId: 'race-b', sourceFile: 'b.md', text: TOPICS.liver, collection: 'race' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(rejected.reason).toMatchObject({ code: 'CONFLICT_STATE' });
    const chunks = await queryRows<{ scenario_id: string }>(database.db, sql`SELECT scenario_id FROM rag_chunks WHERE document_id = 'race'`);
    expect(new Set(chunks.map((c) => c.scenario_id)).size).toBe(1);
  });

  it('searches only the given scenario, and only the given documents', async () => {
    await store.ingestDocument({ documentId: 'iso-a1', scenarioId: 'iso-a', sourceFile: 'a1.md', text: TOPICS.liver, collection: 'iso' });
    await store.ingestDocument({ documentId: 'iso-a2', scenarioId: 'iso-a', sourceFile: 'a2.md', text: TOPICS.visits, collection: 'iso' });
    await store.ingestDocument({ documentId: 'iso-b1', scenarioId: 'iso-b', sourceFile: 'b1.md', text: TOPICS.liver, collection: 'iso' });

    const inA = await store.retrieve({ scenarioId: 'iso-a', query: '肝功能异常', collection: 'iso', topK: 10 });
    expect(inA.map((h) => h.documentId).sort()).toEqual(['iso-a1', 'iso-a2']);
    const onlyA2 = await store.retrieve({ scenarioId: 'iso-a', query: '肝功能异常', collection: 'iso', topK: 10, documentIds: ['iso-a2'] });
    expect(onlyA2.map((h) => h.documentId)).toEqual(['iso-a2']);
    // Another scenario's document id filters to nothing rather than leaking across scenarios.
    expect(await store.retrieve({ scenarioId: 'iso-a', query: '肝功能异常', collection: 'iso', documentIds: ['iso-b1'] })).toEqual([]);
    expect(await store.retrieve({ scenarioId: 'iso-a', query: '肝功能异常', collection: 'iso', documentIds: [] })).toEqual([]);
  });

  it('returns [] for a collection nothing was ingested into', async () => {
    expect(await store.retrieve({ scenarioId: 'protocol-qa', query: '入组标准', collection: 'never-used' })).toEqual([]);
  });

  it('refuses another embedding model or dimension on an existing collection, naming both models', async () => {
    const wider = createRagStore({ db: database.db, embedder: createLocalEmbedder({ dimension: 512 }) });
    const renamed = createRagStore({ db: database.db, embedder: instrumented(local, { model: 'text-embedding-v3' }).embedder });
    const expected = { code: 'EMBEDDING_MISMATCH', message: expect.stringMatching(/"local-hash-ngram-v1".*"local-hash-ngram-v1-512".*new collection/s) };
    await expect(wider.ingestDocument({ scenarioId: 'protocol-qa', sourceFile: 'x.md', text: TOPICS.visits, collection: 'protocols' })).rejects.toMatchObject(expected);
    await expect(wider.retrieve({ scenarioId: 'protocol-qa', query: '访视', collection: 'protocols' })).rejects.toMatchObject(expected);
    await expect(renamed.retrieve({ scenarioId: 'protocol-qa', query: '访视', collection: 'protocols' })).rejects.toMatchObject({ code: 'EMBEDDING_MISMATCH', message: expect.stringContaining('"text-embedding-v3"') });
    // The refused ingest left nothing behind.
    expect((await store.listDocuments({ scenarioId: 'protocol-qa' })).map((d) => d.documentId)).toEqual(['proto-1']);
  });

  it('learns the dimension of an embedder that reports 0 until its first answer', async () => {
    let dimension = 0;
    const lazy: Embedder = {
      model: 'remote-like',
      get dimension() {
        return dimension;
      },
      async embed(texts) {
        dimension = 64;
        return texts.map((text, i) => Array.from({ length: 64 }, (_, j) => Math.sin(text.length + i + j)));
      },
    };
    const remote = createRagStore({ db: database.db, embedder: lazy });
    await remote.ingestDocument({ scenarioId: 's', sourceFile: 'a.md', text: TOPICS.visits, collection: 'remote' });
    expect(await queryRows(database.db, sql`SELECT dimension FROM rag_collections WHERE name = 'remote'`)).toEqual([{ dimension: 64 }]);
    expect(await remote.retrieve({ scenarioId: 's', query: 'x', collection: 'remote' })).toHaveLength(1);
  });

  it('rejects bad input with VALIDATION_FAILED naming each field', async () => {
    const ingest = (overrides: Record<string, unknown>) => store.ingestDocument({ scenarioId: 's', sourceFile: 'a.md', text: 'x', collection: 'ok', ...overrides });
    await expect(ingest({ collection: 'bad name!' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('collection: must be 1-64 letters') });
    await expect(ingest({ collection: 'a'.repeat(65) })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(ingest({ text: ' \n ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/^text is empty/) });
    await expect(ingest({ documentId: 'has space', scenarioId: '' })).rejects.toMatchObject({ message: expect.stringMatching(/documentId: .*\n- scenarioId: /s) });

    const retrieve = (overrides: Record<string, unknown>) => store.retrieve({ scenarioId: 's', query: 'q', collection: 'protocols', ...overrides });
    for (const topK of [0, 51, 2.5]) {
      await expect(retrieve({ topK })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('topK: must be a whole number from 1 to 50') });
    }
    await expect(retrieve({ query: '  ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('query: must be a non-empty string') });
    await expect(retrieve({ documentIds: ['ok', "x' OR 1=1"] })).rejects.toMatchObject({ message: expect.stringContaining('documentIds.1:') });
  });
});
