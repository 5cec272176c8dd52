import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { waitFor } from '../../testing/wait-for.js';
import { registerWorkers } from '../../workers.js';
import { buildServer } from '../server.js';
import { MIN_INDEXED_SCOPE_CHUNKS } from '../../rag/index.js';

/**
 * The search-index route and the upload's hand-over to the background ingest job, with the real workers. RAG
 * needs pgvector, so this runs on PGlite (the machine's PostgreSQL has none; rag-store.postgres.test.ts covers it).
 */
describe('RAG search index over HTTP', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let workers: { stop(): void } | undefined;
  let admin: { authorization: string };
  let reader: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite', startJobs: true });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    admin = { authorization: `Bearer ${(await ctx.users.create({ name: 'rag-admin', role: 'admin' })).token}` };
    reader = { authorization: `Bearer ${(await ctx.users.create({ name: 'rag-reader', role: 'coordinator' })).token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
  });

  it('sends the ingest job after an upload, and shows any signed-in user where the index stands', async () => {
    const upload = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: admin, payload: { scenarioId: 'protocol-qa', sourceFile: 'note.md', text: 'Adverse events are recorded until 30 days after the last visit.', documentId: 'note' } });
    expect(upload.statusCode).toBe(201);
    // The job ingests the scenario's shipped protocol too: its arrival shows the job ran.
    await waitFor(async () => (await ctx.rag.listDocuments({ scenarioId: 'protocol-qa' })).length > 1, 'the ingest job to ingest the shipped protocol');

    const response = await app.inject({ method: 'GET', url: '/api/rag/search-index?scenarioId=protocol-qa', headers: reader });
    expect(response.statusCode).toBe(200);
    const documents = await ctx.rag.listDocuments({ scenarioId: 'protocol-qa' });
    expect(response.json()).toEqual({
      scenarioId: 'protocol-qa',
      collection: 'protocol-qa',
      chunks: documents.reduce((sum, document) => sum + document.chunkCount, 0),
      indexedChunks: 0,
      percent: 0,
      state: 'none',
      search: 'exact',
      index: 'in-process',
      indexFromChunks: MIN_INDEXED_SCOPE_CHUNKS,
    });
  });

  it('says what is wrong with a scenario that has no documents to search', async () => {
    const noRag = await app.inject({ method: 'GET', url: '/api/rag/search-index?scenarioId=data-completeness', headers: reader });
    expect(noRag.statusCode).toBe(400);
    expect(noRag.json()).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('rag.enabled is false') });
    const missing = await app.inject({ method: 'GET', url: '/api/rag/search-index', headers: reader });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('scenarioId');
    expect((await app.inject({ method: 'GET', url: '/api/rag/search-index?scenarioId=protocol-qa' })).statusCode).toBe(401);
  });
});
