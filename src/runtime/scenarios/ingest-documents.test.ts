import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRagStore, type RagStore } from '../../rag/index.js';
import { buildTestContext } from '../../testing/test-context.js';
import { ingestScenarioDocuments } from './ingest-documents.js';

/**
 * The background ingest job's work (workers.ts runs this function for queue rag-ingest-scenario-documents):
 * ingest the scenario's shipped documents, then build its search index with progress. The store's index
 * threshold is lowered so the shipped protocol (a few dozen chunks) counts as a scope large enough for one.
 */
describe('ingestScenarioDocuments', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let rag: RagStore;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    rag = createRagStore({ db: ctx.db, embedder: ctx.embedder, indexFromChunks: 5 });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('ingests the documents, then builds the scope index, reporting progress, so queries use it', async () => {
    const scenario = ctx.scenarios.get('protocol-qa');
    const scope = { scenarioId: scenario.id, collection: scenario.rag.collection };
    expect(await rag.indexStatus(scope)).toMatchObject({ chunks: 0, state: 'none', search: 'exact' });

    const reports: Array<{ added: number; toAdd: number; percent: number }> = [];
    const results = await ingestScenarioDocuments(rag, scenario, { onProgress: (progress) => void reports.push(progress) });

    const chunks = results.reduce((sum, result) => sum + result.chunks, 0);
    expect(chunks).toBeGreaterThanOrEqual(5);
    expect(await rag.indexStatus(scope)).toEqual({ ...scope, chunks, indexedChunks: chunks, percent: 100, state: 'ready', search: 'index', index: 'in-process', indexFromChunks: 5 });
    expect(reports.at(-1)).toEqual({ added: chunks, toAdd: chunks, percent: 100 });

    // A second run (a restart) finds nothing to ingest or index.
    reports.length = 0;
    expect((await ingestScenarioDocuments(rag, scenario, { onProgress: (progress) => void reports.push(progress) })).every((result) => result.unchanged)).toBe(true);
    expect(reports).toEqual([]);
  });
});
