import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestConsultKnowledge } from '../agents/consult/knowledge/index.js';
import { queryRows, sql, type Db } from '../core/db/connect.js';
import { indexScopeQueue } from '../core/jobs/queues.js';
import { buildServer } from '../http/server.js';
import { createRagStore, projectScope, type RagStore, type SearchScope } from '../rag/index.js';
import { buildTestContext } from '../testing/test-context.js';
import { testEngines } from '../testing/test-database.js';
import { waitFor } from '../testing/wait-for.js';
import { ingestProtocolDocument, PROTOCOL_COLLECTION } from '../trial/protocol-documents/protocol-documents.js';
import { enqueueUnfinishedScopeIndexes, registerWorkers } from '../workers.js';
import { requestScopeIndex } from './scope-index-job.js';

/**
 * Protocol documents and the consult knowledge base get their search index from the background job (queue
 * rag-index-scope), as scenario documents do from theirs. The workers run with a store whose index threshold is
 * lowered to INDEX_FROM, so a few protocol sections make a scope large enough for an index (the uploads go through
 * the context's own store: ingestion does not depend on the threshold). RAG needs pgvector, so this part runs on
 * PGlite; the queueing itself runs on both engines below.
 */
const INDEX_FROM = 5;
const PROJECT = 'idx-proto-a';

/** About one chunk (800-1000 characters) per section, each section saying something else. */
function protocolText(title: string, sections: number): string {
  const parts = [`# ${title}`];
  for (let i = 1; i <= sections; i++) {
    const sentence = `Section ${i} of ${title}: visit ${i} falls on day ${7 * i} within a window of ${i} days; ALT above ${i + 2} times the upper limit pauses dosing, and the investigator records the reason. `;
    parts.push(`## ${i}. Visit ${i}\n\n${sentence.repeat(Math.ceil(900 / sentence.length))}`);
  }
  return parts.join('\n\n');
}

async function indexJobs(db: Db, scope: SearchScope): Promise<Array<{ state: string }>> {
  return queryRows<{ state: string }>(
    db,
    sql`SELECT state FROM pgboss.job WHERE name = ${indexScopeQueue.name} AND data->>'collection' = ${scope.collection} AND data->>'scenarioId' = ${scope.scenarioId} ORDER BY created_on`,
  );
}

/** Waits until every job of the scope has left the queue (completed, or failed/retrying), then returns their states. */
async function settledJobs(db: Db, scope: SearchScope): Promise<string[]> {
  const jobs = await waitFor(async () => {
    const rows = await indexJobs(db, scope);
    return rows.length > 0 && rows.every((row) => row.state !== 'created' && row.state !== 'active') && rows;
  }, `the index jobs of ${scope.scenarioId} to settle`);
  return jobs.map((job) => job.state);
}

describe('document scopes indexed by the background job (PGlite, with pgvector)', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let lowered: RagStore;
  let workers: { stop(): void } | undefined;
  let coordinator: { authorization: string };
  const scope = { scenarioId: projectScope(PROJECT), collection: PROTOCOL_COLLECTION };
  const url = `/api/iit/projects/${PROJECT}/protocol-documents`;
  /** The workers start once the burst of uploads has queued its job; later tests find them running. */
  const startWorkers = async () => (workers ??= await registerWorkers({ ...ctx, rag: lowered }));

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite', startJobs: true });
    lowered = createRagStore({ db: ctx.db, embedder: ctx.embedder, indexFromChunks: INDEX_FROM });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.createProject({ id: PROJECT, name: PROJECT });
    const { user, token } = await ctx.users.create({ name: 'idx-coordinator', role: 'coordinator' });
    await ctx.users.addMember(PROJECT, user.id);
    coordinator = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
  });

  it('queues one build for a burst of protocol uploads; the worker then indexes the whole project scope', async () => {
    for (const [sourceFile, sections] of [['protocol.md', 6], ['amendment-1.md', 2], ['crf-guide.md', 1]] as const) {
      const upload = await app.inject({ method: 'POST', url, headers: coordinator, payload: { sourceFile, text: protocolText(sourceFile, sections) } });
      expect(upload.statusCode, sourceFile).toBe(201);
    }
    expect(await indexJobs(ctx.db, scope)).toEqual([{ state: 'created' }]);
    const before = await lowered.indexStatus(scope);
    expect(before.chunks).toBeGreaterThanOrEqual(INDEX_FROM);
    expect(before).toMatchObject({ indexedChunks: 0, state: 'none', search: 'exact' });

    await startWorkers();
    expect(await settledJobs(ctx.db, scope)).toEqual(['completed']);
    expect(await lowered.indexStatus(scope)).toEqual({ ...scope, chunks: before.chunks, indexedChunks: before.chunks, percent: 100, state: 'ready', search: 'index', index: 'in-process', indexFromChunks: INDEX_FROM });
    const [hit] = await lowered.retrieve({ ...scope, query: 'visit 4 falls on day 28', topK: 1 });
    expect(hit?.content).toContain('visit 4 falls on day 28');
  });

  it('sends no job for an unchanged re-upload, and one for a changed document, whose new chunks join the index', async () => {
    await startWorkers();
    const again = await app.inject({ method: 'POST', url, headers: coordinator, payload: { sourceFile: 'protocol.md', text: protocolText('protocol.md', 6) } });
    expect(again.json()).toMatchObject({ unchanged: true, replaced: true });
    expect(await indexJobs(ctx.db, scope)).toHaveLength(1);

    const changed = await app.inject({ method: 'POST', url, headers: coordinator, payload: { sourceFile: 'protocol.md', text: protocolText('protocol.md', 8) } });
    expect(changed.json()).toMatchObject({ unchanged: false, replaced: true });
    expect(await settledJobs(ctx.db, scope)).toEqual(['completed', 'completed']);
    const status = await lowered.indexStatus(scope);
    expect(status).toMatchObject({ state: 'ready', percent: 100 });
    expect(status.indexedChunks).toBe(status.chunks);
  });

  it('indexes the consult knowledge base after it ingests changed articles, and asks for nothing when none changed', async () => {
    await startWorkers();
    const knowledge = { scenarioId: 'consult-dermatology', collection: 'consult-dermatology' };
    const first = await ingestConsultKnowledge(ctx.rag, { jobs: ctx.jobs });
    expect(first.index).toBe('queued');
    expect(await settledJobs(ctx.db, knowledge)).toEqual(['completed']);
    const status = await lowered.indexStatus(knowledge);
    expect(status.chunks).toBeGreaterThanOrEqual(INDEX_FROM);
    expect(status).toMatchObject({ indexedChunks: status.chunks, state: 'ready', search: 'index' });

    const second = await ingestConsultKnowledge(ctx.rag, { jobs: ctx.jobs });
    expect(second.documents.every((document) => document.unchanged)).toBe(true);
    expect(second.index).toBeUndefined();
    expect(await indexJobs(ctx.db, knowledge)).toHaveLength(1);
  });

  it('completes a job whose scope vanished: documents deleted, or never there', async () => {
    await startWorkers();
    const listed = await app.inject({ method: 'GET', url, headers: coordinator });
    for (const { documentId } of listed.json().documents as Array<{ documentId: string }>) {
      expect((await app.inject({ method: 'DELETE', url: `${url}/${documentId}`, headers: coordinator })).statusCode).toBe(204);
    }
    const gone = [scope, { scenarioId: projectScope('idx-never-there'), collection: PROTOCOL_COLLECTION }, { scenarioId: 'no-scenario', collection: 'no-such-collection' }];
    for (const vanished of gone) expect(await requestScopeIndex({ rag: ctx.rag, jobs: ctx.jobs }, vanished)).toBe('queued');

    expect(await settledJobs(ctx.db, scope)).toEqual(['completed', 'completed', 'completed']);
    for (const vanished of gone.slice(1)) expect(await settledJobs(ctx.db, vanished)).toEqual(['completed']);
    expect(await lowered.indexStatus(scope)).toMatchObject({ chunks: 0, indexedChunks: 0 });
    expect(await lowered.retrieve({ ...scope, query: 'visit 4', topK: 3 })).toEqual([]);
  });

  it('queues at start the scopes outside the scenarios left unindexed (after the 0016 upgrade, or a stop before the job)', async () => {
    await startWorkers();
    // Chunks stored with no job sent, as an upgraded database or a process stopped right after an upload leaves them.
    const stranded = { scenarioId: projectScope('idx-proto-stranded'), collection: PROTOCOL_COLLECTION };
    await ctx.rag.ingestDocument({ documentId: 'stranded-protocol', ...stranded, sourceFile: 'protocol.md', text: protocolText('stranded protocol', 6) });
    const scenario = { scenarioId: 'protocol-qa', collection: 'protocol-qa' };
    await ctx.rag.ingestDocument({ documentId: 'scenario-note', ...scenario, sourceFile: 'note.md', text: protocolText('scenario note', 6) });
    expect(await indexJobs(ctx.db, stranded)).toEqual([]);
    // A stranded scope too small for an index: nothing to ask for.
    const small = { scenarioId: projectScope('idx-proto-small'), collection: PROTOCOL_COLLECTION };
    const smallDocument = await ctx.rag.ingestDocument({ documentId: 'small-protocol', ...small, sourceFile: 'protocol.md', text: 'Visit 1: consent.' });
    expect(smallDocument.chunks).toBeLessThan(INDEX_FROM);

    const started = { ...ctx, rag: lowered };
    await enqueueUnfinishedScopeIndexes(started);
    expect(await settledJobs(ctx.db, stranded)).toEqual(['completed']);
    expect(await indexJobs(ctx.db, small)).toEqual([]);
    expect(await lowered.indexStatus(stranded)).toMatchObject({ state: 'ready', percent: 100 });
    // Scenario scopes are their ingest job's; the finished scopes (and the emptied one) ask for nothing.
    expect(await indexJobs(ctx.db, scenario)).toEqual([]);
    await enqueueUnfinishedScopeIndexes(started);
    expect(await indexJobs(ctx.db, stranded)).toHaveLength(1);
    expect(await indexJobs(ctx.db, { scenarioId: 'consult-dermatology', collection: 'consult-dermatology' })).toHaveLength(1);

    // The embedded database's graphs live in the server's memory: after a restart (here a new store) every large
    // scope is queued again, the finished ones included, and the small one still is not.
    const restarted = { ...ctx, rag: createRagStore({ db: ctx.db, embedder: ctx.embedder, indexFromChunks: INDEX_FROM }) };
    expect(await restarted.rag.indexStatus(stranded)).toMatchObject({ state: 'none', search: 'exact', index: 'in-process' });
    await enqueueUnfinishedScopeIndexes(restarted);
    expect(await indexJobs(ctx.db, stranded)).toHaveLength(2);
    expect(await indexJobs(ctx.db, small)).toEqual([]);
  });

  it('indexes in place where there is no job queue (a one-shot command), before the upload returns', async () => {
    const project = 'idx-proto-cli';
    const result = await ingestProtocolDocument(lowered, project, { sourceFile: 'protocol.md', text: protocolText('cli protocol', 6) }, 'system');
    expect(result.chunks).toBeGreaterThanOrEqual(INDEX_FROM);
    const local = { scenarioId: projectScope(project), collection: PROTOCOL_COLLECTION };
    expect(await lowered.indexStatus(local)).toMatchObject({ chunks: result.chunks, indexedChunks: result.chunks, state: 'ready' });
    expect(await indexJobs(ctx.db, local)).toEqual([]);
  });
});

describe.each(testEngines())('the index job queue on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine, startJobs: true });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('keeps one waiting job per scope, whatever the number of requests', async () => {
    const a = { scenarioId: projectScope('queue-a'), collection: PROTOCOL_COLLECTION };
    const b = { scenarioId: projectScope('queue-b'), collection: PROTOCOL_COLLECTION };
    const outcomes = [];
    for (const scope of [a, a, b, a, b]) outcomes.push(await requestScopeIndex({ rag: ctx.rag, jobs: ctx.jobs }, scope));
    expect(outcomes).toEqual(['queued', 'already-queued', 'queued', 'already-queued', 'already-queued']);
    // Concurrent requests too (uploads of several coordinators at once).
    const c = { scenarioId: projectScope('queue-c'), collection: PROTOCOL_COLLECTION };
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => requestScopeIndex({ rag: ctx.rag, jobs: ctx.jobs }, c)));
    expect(concurrent.filter((outcome) => outcome === 'queued')).toHaveLength(1);
    for (const scope of [a, b, c]) expect(await indexJobs(ctx.db, scope)).toEqual([{ state: 'created' }]);
  });
});
