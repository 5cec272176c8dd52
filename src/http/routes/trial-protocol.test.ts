import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestProtocolDocumentResponse, ProtocolDocumentList } from '../../contract/index.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { multipartBody } from '../../testing/multipart.js';
import { createTrialServices } from '../../trial/trial-services.js';
import { buildServer } from '../server.js';

type App = Awaited<ReturnType<typeof buildServer>>;
type Auth = { authorization: string };

const PROTOCOL = '# TRIAL-P 方案\n\n## 5. 访视窗口 Visit windows\n\nV2 第28天 ±3天。V2 at day 28 ± 3 days.\n\n## 7. 安全性 Safety\n\n严重不良事件24小时内上报。SAEs are reported within 24 hours.';

async function setUp(ctx: Awaited<ReturnType<typeof buildTestContext>>, suffix: string) {
  for (const id of ['http-proto-a', 'http-proto-b']) await ctx.users.createProject({ id, name: id });
  const auth: Record<'coordinatorA' | 'coordinatorB' | 'viewerA', Auth> = {} as never;
  for (const [name, role, projectId] of [
    ['coordinatorA', 'coordinator', 'http-proto-a'],
    ['coordinatorB', 'coordinator', 'http-proto-b'],
    ['viewerA', 'viewer', 'http-proto-a'],
  ] as const) {
    const { user, token } = await ctx.users.create({ name: `${name}-${suffix}`, role });
    await ctx.users.addMember(projectId, user.id);
    auth[name] = { authorization: `Bearer ${token}` };
  }
  return auth;
}

const url = (projectId: string, documentId?: string) => `/api/iit/projects/${projectId}/protocol-documents${documentId ? `/${documentId}` : ''}`;

describe('protocol documents over HTTP (PGlite, with pgvector)', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: App;
  let auth: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    auth = await setUp(ctx, 'http');
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('lets a coordinator add a protocol as JSON or as a file, list it and delete it', async () => {
    const json = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: auth.coordinatorA, payload: { sourceFile: 'protocol.md', text: PROTOCOL } });
    expect(json.statusCode).toBe(201);
    const added = IngestProtocolDocumentResponse.parse(json.json());
    expect(added).toMatchObject({ sourceFile: 'protocol.md', unchanged: false, replaced: false });

    const upload = multipartBody({ files: { file: { name: 'crf-guide.md', content: '# CRF guide\n\nEnter visit dates as YYYY-MM-DD.', type: 'text/markdown' } } });
    const file = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: { ...auth.coordinatorA, ...upload.headers }, payload: upload.payload });
    expect(file.statusCode).toBe(201);
    expect(file.json()).toMatchObject({ sourceFile: 'crf-guide.md', replaced: false });

    const again = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: auth.coordinatorA, payload: { sourceFile: 'protocol.md', text: `${PROTOCOL}\n\nAmendment 1.` } });
    expect(again.json()).toMatchObject({ documentId: added.documentId, replaced: true, unchanged: false });

    const listed = await app.inject({ method: 'GET', url: url('http-proto-a'), headers: auth.viewerA });
    expect(listed.statusCode).toBe(200);
    expect(ProtocolDocumentList.parse(listed.json()).documents.map((d) => d.sourceFile).sort()).toEqual(['crf-guide.md', 'protocol.md']);

    const deleted = await app.inject({ method: 'DELETE', url: url('http-proto-a', added.documentId), headers: auth.coordinatorA });
    expect(deleted.statusCode).toBe(204);
    expect((await app.inject({ method: 'GET', url: url('http-proto-a'), headers: auth.coordinatorA })).json().documents.map((d: { sourceFile: string }) => d.sourceFile)).toEqual(['crf-guide.md']);
  });

  it('answers a viewer 403, a non-member 404 and a document of another project 404', async () => {
    const viewer = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: auth.viewerA, payload: { sourceFile: 'x.md', text: 'x' } });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json()).toMatchObject({ code: 'FORBIDDEN' });
    for (const [method, payload] of [['GET', undefined], ['POST', { sourceFile: 'x.md', text: 'x' }]] as const) {
      const outsider = await app.inject({ method, url: url('http-proto-a'), headers: auth.coordinatorB, payload });
      expect(outsider.statusCode, method).toBe(404);
      expect(outsider.json().message, method).toContain('does not exist or you are not a member');
    }

    const other = await app.inject({ method: 'POST', url: url('http-proto-b'), headers: auth.coordinatorB, payload: { sourceFile: 'b.md', text: 'Protocol B: liver tests every 4 weeks.' } });
    const { documentId } = other.json() as { documentId: string };
    const foreign = await app.inject({ method: 'DELETE', url: url('http-proto-a', documentId), headers: auth.coordinatorA });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toContain(`Protocol document "${documentId}" does not exist in project "http-proto-a"`);
    expect((await app.inject({ method: 'GET', url: url('http-proto-b'), headers: auth.coordinatorB })).json().documents).toHaveLength(1);

    // The generic RAG routes neither list a project's documents to anyone nor change them: a coordinator may not
    // change scenario documents at all (admins manage them), and an admin is sent to the project's own route.
    const generic = await app.inject({ method: 'GET', url: '/api/rag/documents', headers: auth.coordinatorA });
    expect(generic.statusCode).toBe(200);
    expect(generic.json().documents.map((d: { documentId: string }) => d.documentId)).not.toContain(documentId);
    const admin = { authorization: `Bearer ${(await ctx.users.create({ name: 'proto-admin', role: 'admin' })).token}` };
    expect((await app.inject({ method: 'DELETE', url: `/api/rag/documents/${documentId}`, headers: auth.coordinatorA })).statusCode).toBe(403);
    const genericDelete = await app.inject({ method: 'DELETE', url: `/api/rag/documents/${documentId}`, headers: admin });
    expect(genericDelete.statusCode).toBe(404);
    expect(genericDelete.json().message).toContain('/api/iit/projects/:projectId/protocol-documents');
    const genericReplace = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: admin, payload: { scenarioId: 'protocol-qa', documentId, sourceFile: 'b.md', text: 'overwritten' } });
    expect(genericReplace.statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: url('http-proto-b'), headers: auth.coordinatorB })).json().documents).toHaveLength(1);
  });

  it("shows members where the project's search index stands, and nobody else", async () => {
    const index = `${url('http-proto-a')}/search-index`;
    const member = await app.inject({ method: 'GET', url: index, headers: auth.viewerA });
    expect(member.statusCode).toBe(200);
    const documents = ProtocolDocumentList.parse((await app.inject({ method: 'GET', url: url('http-proto-a'), headers: auth.viewerA })).json()).documents;
    // A few sections: far below the size from which a scope gets an index, so searched exactly.
    expect(member.json()).toEqual({
      scenarioId: 'project:http-proto-a',
      collection: 'protocol',
      chunks: documents.reduce((sum, document) => sum + document.chunkCount, 0),
      indexedChunks: 0,
      percent: 0,
      state: 'none',
      search: 'exact',
      index: 'in-process',
      indexFromChunks: expect.any(Number),
    });
    const outsider = await app.inject({ method: 'GET', url: index, headers: auth.coordinatorB });
    expect(outsider.statusCode).toBe(404);
    expect(outsider.json().message).toContain('does not exist or you are not a member');
    expect((await app.inject({ method: 'GET', url: `${url('http-proto-missing')}/search-index`, headers: auth.coordinatorA })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: index })).statusCode).toBe(401);
  });

  it('refuses a body it cannot ingest with 400 or 415 and says what to send', async () => {
    const noText = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: auth.coordinatorA, payload: { sourceFile: 'x.md' } });
    expect(noText.statusCode).toBe(400);
    expect(noText.json().message).toContain('Send either JSON with "text" and "sourceFile"');
    const extra = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: auth.coordinatorA, payload: { sourceFile: 'x.md', text: 'x', scenarioId: 'protocol-qa' } });
    expect(extra.statusCode).toBe(400);
    const docx = multipartBody({ files: { file: { name: 'protocol.docx', content: 'PK' } } });
    const unsupported = await app.inject({ method: 'POST', url: url('http-proto-a'), headers: { ...auth.coordinatorA, ...docx.headers }, payload: docx.payload });
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.json().message).toContain('.pdf');
  });
});

describe.each(testEngines())('protocol documents over HTTP without a vector store (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: App;
  let auth: Awaited<ReturnType<typeof setUp>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    // The local PostgreSQL has no pgvector; on an engine that has it, the flag stands for a server that has not.
    // The trial services read the flag when they are built, so they are built again over the flagged context.
    const withoutVectors = { ...ctx, hasVectorStore: false };
    app = await buildServer({ ...withoutVectors, trial: createTrialServices(withoutVectors) }, { serveConsole: false });
    auth = await setUp(ctx, `nv-${engine}`);
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('answers members 503 VECTOR_STORE_UNAVAILABLE saying what to install, and still 404 to non-members', async () => {
    for (const [method, target, payload] of [
      ['GET', url('http-proto-a'), undefined],
      ['POST', url('http-proto-a'), { sourceFile: 'p.md', text: PROTOCOL }],
      ['DELETE', url('http-proto-a', 'protocol_0'), undefined],
      ['GET', `${url('http-proto-a')}/search-index`, undefined],
    ] as const) {
      const response = await app.inject({ method, url: target, headers: auth.coordinatorA, payload });
      expect(response.statusCode, method).toBe(503);
      expect(response.json(), method).toMatchObject({ code: 'VECTOR_STORE_UNAVAILABLE', message: expect.stringContaining('Install pgvector') });
    }
    expect((await app.inject({ method: 'GET', url: url('http-proto-a'), headers: auth.coordinatorB })).statusCode).toBe(404);
  });
});
