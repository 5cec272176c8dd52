import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';
import { multipartBody, type MultipartFile } from '../../testing/multipart.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

const multipart = (fields: Record<string, string>, file: MultipartFile) => multipartBody({ fields, files: { file } });

describe('HTTP API', () => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let auth: { authorization: string };

  beforeAll(async () => {
    model = await startScriptedModel();
    // RAG routes need pgvector, so this file runs on PGlite; the route walk covers PostgreSQL.
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    // Scenario documents serve every project, so an admin manages them.
    const { token } = await ctx.users.create({ name: 'dm-admin', role: 'admin' });
    auth = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await model?.close();
  });

  it('runs a scenario and returns the full AgentResult with its trace', async () => {
    await app.inject({ method: 'POST', url: '/api/rag/documents', headers: auth, payload: { scenarioId: 'protocol-qa', sourceFile: 'note.md', text: 'Adverse events are recorded until 30 days after the last visit.', documentId: 'note' } });
    model.push({ reply: '{"answer": "Until 30 days after the last visit [1].", "citations": ["[1]"], "confidence": "high"}' });
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'protocol-qa', input: 'How long are adverse events recorded?' } });
    expect(response.statusCode).toBe(200);
    const result = response.json();
    expect(result).toMatchObject({ status: 'success', answer: 'Until 30 days after the last visit [1].', structuredOutput: { confidence: 'high' }, error: '' });
    expect(result.references[0]).toMatchObject({ documentId: 'note', sourceFile: 'note.md', chunkId: 'note#0' });
    expect(typeof result.references[0].score).toBe('number');

    const trace = await app.inject({ method: 'GET', url: `/api/traces/${result.traceId}`, headers: auth });
    expect(trace.statusCode).toBe(200);
    expect(trace.json().spans.map((s: { kind: string }) => s.kind)).toEqual(['retrieval', 'step', 'llm']);
    expect(trace.json().userId).toBeTruthy();
  });

  it('never answers success with an error: a cut-off or unparseable answer is asked again, then failed', async () => {
    model.push({ reply: '{"answer": "Half an ans', finishReason: 'length' }, { reply: '{"answer": "Half an ans', finishReason: 'length' });
    const cut = (await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'protocol-qa', input: 'How long are adverse events recorded?' } })).json();
    expect(cut).toMatchObject({ status: 'failed', answer: '', structuredOutput: {} });
    expect(cut.error).toMatch(/cut off by its output token limit/);

    model.push({ reply: 'Adverse events: see the protocol.' }, { reply: '{"answer": "Until 30 days after the last visit [1].", "citations": ["[1]"], "confidence": "high"}' });
    const fixed = (await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'protocol-qa', input: 'How long are adverse events recorded?' } })).json();
    expect(fixed).toMatchObject({ status: 'success', error: '', answer: 'Until 30 days after the last visit [1].' });
  });

  it('answers 404 for an unknown scenario and 400 naming the field for a malformed body', async () => {
    const unknown = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'nope', input: 'x' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
    expect(unknown.json().message).toContain('protocol-qa');

    const missing = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'protocol-qa' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('VALIDATION_FAILED');
    expect(missing.json().message).toContain('body.input: is required');

    const wrongType = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'protocol-qa', input: 'x', options: { documentIds: { all: true } } } });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().message).toContain('body.options.documentIds');

    const notJson = await app.inject({ method: 'POST', url: '/api/agent/run', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"scenarioId": ' });
    expect(notJson.statusCode).toBe(400);
  });

  it('returns a failed result, not an HTTP error, when the model fails', async () => {
    model.push({ status: 500 }, { status: 500 }, { status: 500 });
    const response = await app.inject({ method: 'POST', url: '/api/agent/run', headers: auth, payload: { scenarioId: 'data-completeness', input: 'check' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'failed' });
    expect(response.json().error).toBe('The language model service failed (HTTP 500) and is unavailable right now. Try again later.');
    // Where the model runs and what its server said are for the operator: the run's trace keeps them, the answer does not.
    expect(response.body).not.toContain(model.baseURL);
    expect(response.body).not.toContain('scripted status 500');
    const trace = (await app.inject({ method: 'GET', url: `/api/traces/${response.json().traceId}`, headers: auth })).json();
    expect(trace.spans.find((s: { kind: string }) => s.kind === 'llm').error).toContain(model.baseURL);
  });

  it('answers a streamed run whose model cannot be reached with a plain sentence, without the endpoint', async () => {
    const down = await startScriptedModel();
    const unreachable = down.baseURL;
    await down.close();
    const offline = await buildTestContext({ llmBaseUrl: unreachable, engine: 'pglite', env: { LLM_MAX_RETRIES: '0' } });
    const offlineApp = await buildServer(offline, { serveConsole: false });
    try {
      const { token } = await offline.users.create({ name: 'offline-admin', role: 'admin' });
      const headers = { authorization: `Bearer ${token}` };
      const plain = await offlineApp.inject({ method: 'POST', url: '/api/agent/run', headers, payload: { scenarioId: 'data-completeness', input: 'check' } });
      expect(plain.json()).toMatchObject({ status: 'failed', error: 'The language model service cannot be reached right now. Try again later; if it keeps happening, tell your administrator.' });
      const streamed = await offlineApp.inject({ method: 'POST', url: '/api/agent/run/stream', headers, payload: { scenarioId: 'data-completeness', input: 'check' } });
      expect(streamed.body).toContain('cannot be reached right now');
      for (const body of [plain.body, streamed.body]) expect(body).not.toContain(unreachable.replace(/\/v1$/, ''));
    } finally {
      await offlineApp.close();
      await offline.close();
    }
  });

  it('ingests JSON and multipart documents, replaces them by id and deletes them', async () => {
    const json = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: auth, payload: { scenarioId: 'protocol-qa', sourceFile: 'a.md', text: 'First version of the text.', documentId: 'doc-a' } });
    expect(json.statusCode).toBe(201);
    expect(json.json()).toMatchObject({ documentId: 'doc-a', chunks: 1 });

    const upload = multipart({ scenarioId: 'protocol-qa', documentId: 'doc-a' }, { name: 'a.md', content: '# Second version\n\nReplaced text about visit windows.', type: 'text/markdown' });
    const replaced = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: { ...auth, ...upload.headers }, payload: upload.payload });
    expect(replaced.statusCode).toBe(201);
    const listed = await app.inject({ method: 'GET', url: '/api/rag/documents?scenarioId=protocol-qa', headers: auth });
    const doc = listed.json().documents.find((d: { documentId: string }) => d.documentId === 'doc-a');
    expect(doc).toMatchObject({ sourceFile: 'a.md', chunkCount: 1 });
    const hits = await ctx.rag.retrieve({ scenarioId: 'protocol-qa', query: 'visit windows', collection: 'protocol-qa', documentIds: ['doc-a'] });
    expect(hits.map((h) => h.content).join(' ')).toContain('Replaced text');
    expect(hits.map((h) => h.content).join(' ')).not.toContain('First version');

    const removed = await app.inject({ method: 'DELETE', url: '/api/rag/documents/doc-a', headers: auth });
    expect(removed.statusCode).toBe(204);
    const again = await app.inject({ method: 'DELETE', url: '/api/rag/documents/doc-a', headers: auth });
    expect(again.statusCode).toBe(404);
  });

  it('rejects unsupported files, missing text and scenarios without RAG with clear errors', async () => {
    const docx = multipart({ scenarioId: 'protocol-qa' }, { name: 'protocol.docx', content: Buffer.from([0x50, 0x4b, 0x03, 0x04]), type: 'application/octet-stream' });
    const unsupported = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: { ...auth, ...docx.headers }, payload: docx.payload });
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.json().message).toMatch(/\.txt|\.md|\.pdf/);

    const noText = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: auth, payload: { scenarioId: 'protocol-qa' } });
    expect(noText.statusCode).toBe(400);

    const noRag = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: auth, payload: { scenarioId: 'data-completeness', sourceFile: 'x.md', text: 'x' } });
    expect(noRag.statusCode).toBe(400);
    expect(noRag.json().message).toContain('rag.enabled is false');
  });

  it('publishes an OpenAPI document generated from the route schemas', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/openapi.json', headers: auth });
    expect(response.statusCode).toBe(200);
    const doc = response.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/agent/run', '/api/scenarios', '/api/rag/documents', '/api/traces/{id}']));
    expect(doc.paths['/api/agent/run'].post.requestBody.content['application/json'].schema.required).toEqual(['scenarioId', 'input']);
  });

  it('answers unknown API paths with a JSON 404', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/nothing-here', headers: auth });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('NOT_FOUND');
  });
});
