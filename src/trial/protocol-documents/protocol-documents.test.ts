import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { packageRoot } from '../../core/paths.js';
import { createToolRegistry, type ToolRegistry } from '../../core/tools/registry.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { createTrialServices, type TrialServices } from '../trial-services.js';

/**
 * Protocol documents per project and the search_protocol tool over them. Vector search needs pgvector, which
 * the embedded database has; the local PostgreSQL has not, so the search runs on PGlite and the refusal on
 * every engine.
 */

const DEMO_PROTOCOL = readFileSync(path.join(packageRoot(), 'scenarios', 'documents', 'protocol-qa', 'DEMO-HTN-01-protocol.md'), 'utf8');
const LIVER_PROTOCOL = [
  '# LIVER-02 方案 Protocol',
  '肝功能异常处理：若谷丙转氨酶（ALT）或谷草转氨酶超过正常值上限三倍，研究者应立即暂停给药，七十二小时内复查肝功能，并按严重不良事件流程上报。',
  'Liver function: if ALT or AST exceeds three times the upper limit of normal, stop the study drug at once and repeat liver tests within 72 hours.',
].join('\n\n');

const A = 'proto-a';
const B = 'proto-b';

async function people(ctx: Awaited<ReturnType<typeof buildTestContext>>, suffix: string) {
  const make = async (name: string, role: 'coordinator' | 'viewer', projects: string[]) => {
    const { user } = await ctx.users.create({ name: `${name}-${suffix}`, role });
    for (const projectId of projects) await ctx.users.addMember(projectId, user.id);
    return user;
  };
  for (const id of [A, B]) await ctx.users.createProject({ id, name: id });
  return { crcA: await make('crc-a', 'coordinator', [A]), crcB: await make('crc-b', 'coordinator', [B]), viewerA: await make('viewer-a', 'viewer', [A]), outsider: await make('outsider', 'coordinator', []) };
}

describe('protocol documents and search_protocol (PGlite, with pgvector)', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  let as: Awaited<ReturnType<typeof people>>;
  const tools = async (user: User, projectId: string): Promise<ToolRegistry> => createToolRegistry().extend(await trial.readTools.forProject(user, projectId));
  const search = async (user: User, projectId: string, query: string, top_k = 5) => {
    const result = await (await tools(user, projectId)).run('search_protocol', { query, top_k });
    expect(result.error).toBe('');
    return result.result as { chunks: Array<{ source_file: string; chunk_id: string; text: string; score: number }>; note?: string };
  };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    trial = ctx.trial;
    as = await people(ctx, 'lib');
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it("ingests a project's protocol and finds the passage a question is about, with its source and chunk id", async () => {
    expect(ctx.hasVectorStore).toBe(true);
    const ingested = await trial.protocolDocuments.ingest(as.crcA, A, { sourceFile: 'DEMO-HTN-01-protocol.md', text: DEMO_PROTOCOL });
    expect(ingested).toMatchObject({ sourceFile: 'DEMO-HTN-01-protocol.md', unchanged: false, replaced: false });
    expect(ingested.chunks).toBeGreaterThan(2);
    await trial.protocolDocuments.ingest(as.crcB, B, { sourceFile: 'liver-protocol.md', text: LIVER_PROTOCOL });

    expect(await trial.protocolDocuments.list(as.viewerA, A)).toEqual([
      { documentId: ingested.documentId, sourceFile: 'DEMO-HTN-01-protocol.md', chunkCount: ingested.chunks, contentHash: expect.stringMatching(/^[0-9a-f]{64}$/), updatedAt: expect.any(String) },
    ]);
    const { chunks } = await search(as.viewerA, A, 'V2 访视窗口期是多少天？visit window', 3);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0]).toMatchObject({ source_file: 'DEMO-HTN-01-protocol.md', chunk_id: expect.stringMatching(new RegExp(`^${ingested.documentId}#\\d+$`)) });
    expect(chunks.map((chunk) => chunk.text).join('\n')).toContain('±3天 ±3 days');
  });

  it("never returns another project's passages, even for a question only the other project's protocol answers", async () => {
    const fromA = await search(as.crcA, A, '谷丙转氨酶超过正常值上限三倍时是否暂停给药？ALT three times ULN', 10);
    expect(fromA.chunks.length).toBeGreaterThan(0);
    expect(new Set(fromA.chunks.map((chunk) => chunk.source_file))).toEqual(new Set(['DEMO-HTN-01-protocol.md']));
    expect(fromA.chunks.map((chunk) => chunk.text).join('\n')).not.toContain('谷丙转氨酶');
    const fromB = await search(as.crcB, B, 'V2 visit window ±3 days', 10);
    expect(fromB.chunks.map((chunk) => chunk.source_file)).toEqual(['liver-protocol.md']);
    expect(fromB.chunks[0]!.text).toContain('谷丙转氨酶');
  });

  it('replaces a document uploaded again under the same file name, and takes uploaded files', async () => {
    const again = await trial.protocolDocuments.ingest(as.crcA, A, { sourceFile: 'DEMO-HTN-01-protocol.md', text: DEMO_PROTOCOL });
    expect(again).toMatchObject({ unchanged: true, replaced: true });
    const amended = DEMO_PROTOCOL.replace('±3天 ±3 days', '±4天 ±4 days（第3号修正案 amendment 3）');
    const replaced = await trial.protocolDocuments.ingest(as.crcA, A, { sourceFile: 'DEMO-HTN-01-protocol.md', text: amended });
    expect(replaced).toMatchObject({ documentId: again.documentId, unchanged: false, replaced: true });
    expect((await trial.protocolDocuments.list(as.crcA, A)).map((d) => d.sourceFile)).toEqual(['DEMO-HTN-01-protocol.md']);
    const passages = (await search(as.crcA, A, 'V2 访视窗口期 visit window', 10)).chunks.map((chunk) => chunk.text).join('\n');
    expect(passages).toContain('amendment 3');
    expect(passages).not.toContain('±3天 ±3 days');

    const upload = await trial.protocolDocuments.ingest(as.crcA, A, { file: { filename: 'crf-guide.md', data: Buffer.from('# CRF 填写指南\n\n访视日期按 YYYY-MM-DD 填写。Enter visit dates as YYYY-MM-DD.', 'utf8') } });
    expect(upload).toMatchObject({ sourceFile: 'crf-guide.md', replaced: false });
    expect((await trial.protocolDocuments.list(as.crcA, A)).map((d) => d.sourceFile).sort()).toEqual(['DEMO-HTN-01-protocol.md', 'crf-guide.md']);
  });

  it('refuses documents it could not search, with what to send instead', async () => {
    await expect(trial.protocolDocuments.ingest(as.crcA, A, { file: { filename: 'protocol.docx', data: Buffer.from('PK') } })).rejects.toMatchObject({ code: 'UNSUPPORTED_FILE' });
    await expect(trial.protocolDocuments.ingest(as.crcA, A, { text: 'some text' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('sourceFile: is required with text') });
    await expect(trial.protocolDocuments.ingest(as.crcA, A, { sourceFile: 'blank.md', text: '  \n ' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('"blank.md" has no text to search') });
    await expect(trial.protocolDocuments.ingest(as.crcA, A, {})).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('lets members read and writers change, and answers outsiders as for a project that does not exist', async () => {
    await expect(trial.protocolDocuments.ingest(as.viewerA, A, { sourceFile: 'x.md', text: 'x' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    for (const attempt of [
      () => trial.protocolDocuments.list(as.outsider, A),
      () => trial.protocolDocuments.ingest(as.outsider, A, { sourceFile: 'x.md', text: 'x' }),
      () => trial.protocolDocuments.delete(as.outsider, A, 'anything'),
      () => trial.readTools.forProject(as.outsider, A),
      () => trial.protocolDocuments.ingest(as.crcB, A, { sourceFile: 'x.md', text: 'x' }),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'NOT_FOUND', details: { projectId: A } });
    }
  });

  it("deletes a project's own document only; another project's id is not found", async () => {
    const [liver] = await trial.protocolDocuments.list(as.crcB, B);
    await expect(trial.protocolDocuments.delete(as.crcA, A, liver!.documentId)).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(`does not exist in project "${A}"`) });
    expect(await trial.protocolDocuments.list(as.crcB, B)).toHaveLength(1);
    await expect(trial.protocolDocuments.delete(as.crcA, A, 'doc_unknown')).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await trial.protocolDocuments.delete(as.crcB, B, liver!.documentId);
    expect(await trial.protocolDocuments.list(as.crcB, B)).toEqual([]);
    const empty = await search(as.crcB, B, 'ALT');
    expect(empty.chunks).toEqual([]);
    expect(empty.note).toContain(`has no protocol documents yet`);
    expect(empty.note).toContain(`POST /api/iit/projects/${B}/protocol-documents`);
  });
});

describe.each(testEngines())('protocol documents without a vector store (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let trial: TrialServices;
  let as: Awaited<ReturnType<typeof people>>;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    // The local PostgreSQL has no pgvector; on an engine that has it, the flag stands for a server that has not.
    trial = createTrialServices({ ...ctx, hasVectorStore: false });
    as = await people(ctx, `nv-${engine}`);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('refuses members with VECTOR_STORE_UNAVAILABLE naming what to install, and outsiders as ever', async () => {
    for (const attempt of [
      () => trial.protocolDocuments.list(as.viewerA, A),
      () => trial.protocolDocuments.ingest(as.crcA, A, { sourceFile: 'p.md', text: 'protocol' }),
      () => trial.protocolDocuments.delete(as.crcA, A, 'protocol_x'),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'VECTOR_STORE_UNAVAILABLE', status: 503, message: expect.stringMatching(/Protocol documents of project "proto-a".*Install pgvector/) });
    }
    await expect(trial.protocolDocuments.list(as.outsider, A)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trial.protocolDocuments.ingest(as.viewerA, A, { sourceFile: 'p.md', text: 'protocol' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('lets search_protocol say the project has no searchable documents and how to add them', async () => {
    const registry = createToolRegistry().extend(await trial.readTools.forProject(as.viewerA, A));
    const result = await registry.run('search_protocol', { query: 'visit window' });
    expect(result).toMatchObject({ success: true, result: { chunks: [], note: expect.stringContaining('no vector store (pgvector)') } });
    expect((result.result as { note: string }).note).toContain(`POST /api/iit/projects/${A}/protocol-documents`);
  });
});
