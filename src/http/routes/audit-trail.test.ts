import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestScenarioDocuments, scenarioDocumentId } from '../../runtime/scenarios/ingest-documents.js';
import { sql } from '../../core/db/connect.js';
import { buildTestContext } from '../../testing/test-context.js';
import { waitFor } from '../../testing/wait-for.js';
import { ensureDemoTrial } from '../../trial/demo/load-demo-trial.js';
import { createTrialStore } from '../../trial/store/trial-store.js';
import { registerWorkers } from '../../workers.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;
type Headers = { authorization: string };
interface Entry {
  id: number;
  entityType: string;
  entityId: string;
  action: string;
  actor: string;
  oldValue: unknown;
  newValue: unknown;
}

/**
 * Every change reachable through the API leaves an audit entry naming who made it, and the trail's hash chain
 * shows an entry changed past the append-only trigger. Each case goes through HTTP as the role that acts.
 */
describe('the audit trail through the HTTP API', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let workers: { stop(): void };
  let admin: Headers;
  let coordinator: Headers;
  let outsider: Headers;
  let viewer: Headers;
  let coordinatorId: string;

  const trail = async (projectId: string, query = ''): Promise<Entry[]> => {
    const response = await app.inject({ method: 'GET', url: `/api/iit/projects/${encodeURIComponent(projectId)}/audit${query}`, headers: admin });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().entries;
  };

  beforeAll(async () => {
    // PGlite on every run: document deletion needs pgvector, which CI's PostgreSQL lacks. The chain itself is
    // tested on both engines (core/audit/audit-chain.test.ts), the API on PostgreSQL as the app role (core/db/app-role.test.ts).
    ctx = await buildTestContext({ startJobs: true, engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    workers = await registerWorkers(ctx);
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    admin = bearer((await ctx.users.create({ name: 'dm-admin', role: 'admin' })).token);
    const crc = await ctx.users.create({ name: 'crc-wang', role: 'coordinator' });
    coordinator = bearer(crc.token);
    coordinatorId = crc.user.id;
    outsider = bearer((await ctx.users.create({ name: 'crc-other', role: 'coordinator' })).token);
    viewer = bearer((await ctx.users.create({ name: 'monitor', role: 'viewer' })).token);
  });

  afterAll(async () => {
    workers?.stop();
    await app?.close();
    await ctx?.close();
  });

  it('records who created a project and who added a member, once however often the member is added', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/projects', headers: admin, payload: { id: 'audit-trial', name: 'Audit trial' } });
    expect(created.statusCode, created.body).toBe(201);
    for (let i = 0; i < 2; i++) {
      const added = await app.inject({ method: 'POST', url: '/api/projects/audit-trial/members', headers: admin, payload: { userId: coordinatorId } });
      expect(added.statusCode, added.body).toBe(204);
    }

    expect(await trail('audit-trial')).toEqual([
      expect.objectContaining({ entityType: 'project', entityId: 'audit-trial', action: 'project.create', actor: 'dm-admin', newValue: { name: 'Audit trial' } }),
      expect.objectContaining({ entityType: 'member', entityId: coordinatorId, action: 'member.add', actor: 'dm-admin', newValue: { userId: coordinatorId, userName: 'crc-wang', role: 'coordinator', projectRole: null } }),
    ]);
  });

  it('verifies the hash chain for members only, and names an entry changed past the append-only trigger', async () => {
    const verify = (headers: Headers) => app.inject({ method: 'GET', url: '/api/iit/projects/audit-trial/audit/verify', headers });
    expect((await verify(coordinator)).json()).toEqual({ projectId: 'audit-trial', ok: true, entries: 2 });
    expect((await verify(outsider)).statusCode).toBe(404);

    // What a database superuser could do; the trigger stops everyone else (see core/db/app-role.test.ts).
    const [, memberEntry] = await trail('audit-trial');
    await ctx.db.transaction(async (tx) => {
      await tx.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
      await tx.execute(sql`UPDATE audit_log SET actor = 'crc-wang' WHERE id = ${memberEntry!.id}`);
      await tx.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
    });

    const broken = await verify(coordinator);
    expect(broken.statusCode).toBe(200);
    expect(broken.json()).toEqual({ projectId: 'audit-trial', ok: false, entries: 2, firstBadEntryId: memberEntry!.id, problem: expect.stringContaining(`entry ${memberEntry!.id} does not match its hash`) });
  });

  it('records who ingested and deleted a scenario document; only admins change documents every project shares', async () => {
    const byCoordinator = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: coordinator, payload: { scenarioId: 'protocol-qa', sourceFile: 'site-notes.md', text: '# Site notes\n\nVisit 2 may be done at home.' } });
    expect(byCoordinator.statusCode).toBe(403);
    expect(byCoordinator.json()).toMatchObject({ code: 'FORBIDDEN', details: { needs: ['admin'] } });
    const ingested = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: admin, payload: { scenarioId: 'protocol-qa', sourceFile: 'site-notes.md', text: '# Site notes\n\nVisit 2 may be done at home.' } });
    expect(ingested.statusCode, ingested.body).toBe(201);
    const { documentId } = ingested.json();
    for (const who of [viewer, coordinator]) expect((await app.inject({ method: 'DELETE', url: `/api/rag/documents/${documentId}`, headers: who })).statusCode).toBe(403);

    const deleted = await app.inject({ method: 'DELETE', url: `/api/rag/documents/${documentId}`, headers: admin });
    expect(deleted.statusCode, deleted.body).toBe(204);

    const entries = (await trail('@platform', `?entityType=document`)).filter((e) => e.entityId === documentId);
    expect(entries).toEqual([
      expect.objectContaining({ action: 'document.ingest', actor: 'dm-admin', newValue: expect.objectContaining({ scenarioId: 'protocol-qa', sourceFile: 'site-notes.md', chunkCount: 1 }) }),
      expect.objectContaining({ action: 'document.delete', actor: 'dm-admin', oldValue: expect.objectContaining({ scenarioId: 'protocol-qa', sourceFile: 'site-notes.md' }) }),
    ]);
  });

  it('lets only an admin delete or replace a document shipped with a scenario', async () => {
    await ingestScenarioDocuments(ctx.rag, ctx.scenarios.get('protocol-qa'));
    const shipped = scenarioDocumentId('protocol-qa', 'DEMO-HTN-01-protocol.md');

    const refused = await app.inject({ method: 'DELETE', url: `/api/rag/documents/${shipped}`, headers: coordinator });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN', details: { needs: ['admin'] } });
    const replaced = await app.inject({ method: 'POST', url: '/api/rag/documents', headers: coordinator, payload: { scenarioId: 'protocol-qa', documentId: shipped, sourceFile: 'protocol.md', text: 'Inclusion: anyone.' } });
    expect(replaced.statusCode).toBe(403);
    expect((await ctx.rag.getDocument(shipped))?.sourceFile).toBe('DEMO-HTN-01-protocol.md');

    const deleted = await app.inject({ method: 'DELETE', url: `/api/rag/documents/${shipped}`, headers: admin });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await trail('@platform', `?entityType=document&entityId=${shipped}`)).map((e) => [e.action, e.actor])).toEqual([
      ['document.ingest', 'system'],
      ['document.delete', 'dm-admin'],
    ]);
  });

  it('records who started a QC run and that it completed, each with its actor', async () => {
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    // Records without planted errors: no run waits for review, so the batch completes on its own.
    const started = await app.inject({ method: 'POST', url: '/api/iit/projects/demo-htn-01/qc-runs', headers: admin, payload: { skillId: 'demo-core-checks', recordIds: ['S001', 'S002', 'S003'] } });
    expect(started.statusCode, started.body).toBe(202);
    const runId = started.json().id as string;
    const progress = await waitFor(async () => {
      const current = (await app.inject({ method: 'GET', url: `/api/iit/qc-runs/${runId}`, headers: admin })).json();
      return current.status === 'completed' && current;
    }, 'the QC run to complete', 60_000, 200);
    expect(progress).toMatchObject({ status: 'completed', completed: 3 });

    const entries = await trail('demo-htn-01', `?entityType=qc_run&entityId=${progress.id}`);
    expect(entries.map((e) => [e.action, e.actor, (e.newValue as { status: string }).status])).toEqual([
      ['started', 'dm-admin', 'running'],
      ['completed', 'system', 'completed'],
    ]);
    expect((await app.inject({ method: 'GET', url: '/api/iit/projects/demo-htn-01/audit/verify', headers: admin })).json()).toMatchObject({ ok: true });
  });
});
