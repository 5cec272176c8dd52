import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun } from '../../../contract/index.js';
import { buildServer } from '../../../http/server.js';
import { rejectionOf } from '../../../testing/error-of.js';
import { INTAKE_RESPOND, INTAKE_SCENARIO } from '../../../testing/intake-agent.js';
import { startScriptedModel, type ScriptedModel } from '../../../testing/scripted-model.js';
import { buildTestContext } from '../../../testing/test-context.js';
import { createThrowawayDatabase, openTestDatabase, TEST_AUDIT_KEY } from '../../../testing/test-database.js';
import { waitFor } from '../../../testing/wait-for.js';
import { ensureDemoTrial } from '../../../trial/demo/load-demo-trial.js';
import { registerQcWorkers } from '../../../trial/qc/workers.js';
import { createTrialStore } from '../../../trial/store/trial-store.js';
import { openDatabase, queryRows, sql, type Database, type Db } from '../connect.js';
import { runMigrations } from '../migrate.js';
import * as schema from '../schema/index.js';
import { copyDatabase } from './copy-database.js';
import { planCopy } from './copy-plan.js';

const PROJECT = 'demo-htn-01';
const TARGET_ENGINE = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * An empty database of the engine this run targets: a throwaway database on TEST_DATABASE_URL's server (as CI runs),
 * else a fresh in-memory PGlite, so a PGlite-only run still copies (PGlite -> PGlite) rather than skipping.
 */
async function emptyTarget(): Promise<Database> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openDatabase({ auditKey: TEST_AUDIT_KEY });
  const { url, drop } = await createThrowawayDatabase(serverUrl);
  const database = await openDatabase({ databaseUrl: url, poolSize: 4, auditKey: TEST_AUDIT_KEY });
  return { ...database, close: async () => { await database.close(); await drop(); } };
}

const rowsOf = (db: Db, query: string) => queryRows<Record<string, unknown>>(db, sql.raw(query));

/**
 * Issue 25: moving from the embedded database to PostgreSQL. The source is a working installation on PGlite: the demo
 * trial imported, a QC run with queries waiting for review (one approved, one query answered), project memory, and an
 * agent run still PENDING (its job stays behind in the source's queue). After the copy a server on the target reads
 * the trial, verifies the audit chain, appends to it, and the pending run is picked up there.
 */
describe(`clinagent db copy: PGlite to ${TARGET_ENGINE}`, () => {
  let model: ScriptedModel;
  let scenariosDir: string;
  let source: Database;
  let target: Database;
  let pendingRunId: string;
  const env = () => ({ SCENARIOS_DIR: scenariosDir, QC_SWEEP_INTERVAL_MS: '200', QC_STALE_MS: '1' });

  beforeAll(async () => {
    scenariosDir = mkdtempSync(path.join(tmpdir(), 'clinagent-db-copy-'));
    writeFileSync(path.join(scenariosDir, 'test-intake.yaml'), INTAKE_SCENARIO);
    model = await startScriptedModel([], { fallback: { reply: INTAKE_RESPOND } });
    source = await openTestDatabase({ engine: 'pglite' });
    const ctx = await buildTestContext({ database: source, startJobs: true, llmBaseUrl: model.baseURL, env: env() });
    const app = await buildServer(ctx, { serveConsole: false });
    // QC workers only: the agent run below must stay PENDING, as one queued when the old server stopped.
    const workers = await registerQcWorkers({ ...ctx.trial.sop, jobs: ctx.jobs! }, { concurrency: 2, sweepIntervalMs: 60_000, staleMs: 60_000 });
    const { token } = await ctx.users.create({ name: 'copy-admin', role: 'admin' });
    const headers = { authorization: `Bearer ${token}` };
    const call = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    const started = (await call('POST', `/api/iit/projects/${PROJECT}/qc-runs`, { skillId: 'demo-core-checks', recordIds: ['S027', 'S037', 'S085', 'S001'] })).json<{ id: string }>();
    await waitFor(async () => (await call('GET', `/api/iit/qc-runs/${started.id}`)).json<{ status: string }>().status === 'waiting_review', 'the QC run to wait for review', 60_000);
    const suspended = (await call('GET', `/api/iit/projects/${PROJECT}/task-runs?status=SUSPENDED`)).json<{ taskRuns: Array<{ id: string }> }>().taskRuns;
    expect((await call('POST', `/api/iit/task-runs/${suspended[0]!.id}/review`, { decision: 'approve', comment: 'checked with the site' })).statusCode).toBe(200);
    const queries = (await call('GET', `/api/iit/projects/${PROJECT}/queries`)).json<{ queries: Array<{ id: string; allowedTransitions: string[] }> }>().queries;
    const open = queries.find((q) => q.allowedTransitions.includes('answered'))!;
    expect((await call('POST', `/api/iit/projects/${PROJECT}/queries/${open.id}/transition`, { to: 'answered', comment: 'corrected in the CRF' })).statusCode).toBe(200);
    expect((await call('POST', `/api/iit/projects/${PROJECT}/memory/facts`, { facts: [{ section: 'state', text: 'Site 02 closes for August.' }] })).statusCode).toBe(200);
    const run = await call('POST', '/api/agent/runs', { scenarioId: 'test-intake', input: 'I have a cough.' });
    expect(run.statusCode).toBe(202);
    pendingRunId = run.json<AgentRun>().id;
    workers.stop();
    await app.close();
    await ctx.jobs?.stop();
    await ctx.trace.close();
    target = await emptyTarget();
  }, 120_000);

  afterAll(async () => {
    await target?.close();
    await source?.close();
    await model?.close();
    if (scenariosDir) rmSync(scenariosDir, { recursive: true, force: true });
  });

  it('covers every table of the Drizzle schema, read from the catalogue so a new table needs no code', async () => {
    const drizzleTables = Object.values(schema).filter((value) => is(value, PgTable)).map((table) => getTableName(table as PgTable));
    const planned = (await planCopy(source.db)).tables.map((t) => t.name);
    expect(drizzleTables.length).toBeGreaterThan(10);
    expect(planned).toEqual(expect.arrayContaining(drizzleTables));
    // Parents before children: every foreign key points back in the order.
    const order = (name: string) => planned.indexOf(name);
    expect(order('projects')).toBeLessThan(order('qc_runs'));
    expect(order('qc_runs')).toBeLessThan(order('task_runs'));
    expect(order('task_runs')).toBeLessThan(order('pending_actions'));
    expect(order('conversations')).toBeLessThan(order('agent_runs'));
  });

  it('checks a dry run without writing anything to the target', async () => {
    const report = await copyDatabase(source, target, { dryRun: true });
    expect(report).toMatchObject({ dryRun: true, ok: true, audit: null });
    expect(report.tables.find((t) => t.table === 'audit_log')!.source).toBeGreaterThan(0);
    const [row] = await rowsOf(target.db, "SELECT to_regclass('public.projects') IS NULL AS absent");
    expect(row).toEqual({ absent: true });
  });

  it('copies every row, keeps the audit chain (ids, times, hashes) and verifies counts and chains on the target', async () => {
    const progress: string[] = [];
    const report = await copyDatabase(source, target, { onTableStart: (table) => progress.push(table) });
    expect(report.audit).toMatchObject({ ok: true, problems: [] });
    expect(report.audit!.entries).toBeGreaterThan(10);
    expect(report.ok).toBe(true);
    for (const t of report.tables) expect(t.target, t.table).toBe(t.source);
    for (const table of ['projects', 'trial_records', 'qc_runs', 'task_runs', 'pending_actions', 'audit_log', 'project_memory', 'agent_runs', 'users']) {
      expect(report.tables.find((t) => t.table === table)!.source, table).toBeGreaterThan(0);
    }
    // Exactly the same trail, value for value (times to the microsecond, as the chain hashes them).
    const trail = "SELECT id::text AS id, project_id, action, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at, old_value::text AS old_value, new_value::text AS new_value, prev_hash, hash FROM audit_log ORDER BY id";
    expect(await rowsOf(target.db, trail)).toEqual(await rowsOf(source.db, trail));
    const queries = 'SELECT id::text AS id, status, held_by_task_run_id::text AS held, value::text AS value, no_longer_fires::text AS nlf, created_at::text AS created FROM pending_actions ORDER BY id';
    expect(await rowsOf(target.db, queries)).toEqual(await rowsOf(source.db, queries));
    const records = 'SELECT record_id, event_name, data::text AS data, version::text AS version FROM trial_records ORDER BY 1, 2';
    expect(await rowsOf(target.db, records)).toEqual(await rowsOf(source.db, records));
    expect(progress).toContain('pending_actions');
  }, 60_000);

  it('serves the copied trial from the target, appends to its chain, and picks up the run that was pending', async () => {
    const ctx = await buildTestContext({ database: target, engine: TARGET_ENGINE, startJobs: true, llmBaseUrl: model.baseURL, env: env() });
    const app = await buildServer(ctx, { serveConsole: false });
    const workers = await ctx.agentRunHost.start({ concurrency: 1, sweepIntervalMs: 100, staleMs: 1 });
    try {
      const { token } = await ctx.users.create({ name: 'copy-admin-2', role: 'admin' });
      const headers = { authorization: `Bearer ${token}` };
      const records = await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/records?limit=5`, headers });
      expect(records.statusCode).toBe(200);
      const before = (await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/audit/verify`, headers })).json<{ ok: boolean; entries: number }>();
      expect(before.ok).toBe(true);

      const store = createTrialStore(ctx.db);
      const [row] = await store.getRecord(PROJECT, 'S001');
      await store.importRecords(PROJECT, [{ recordId: row!.recordId, eventName: row!.eventName, site: row!.site, data: { ...row!.data, copy_check: 'after the move' } }], { actor: 'dm', reason: 'correction after the move' });
      const after = (await app.inject({ method: 'GET', url: `/api/iit/projects/${PROJECT}/audit/verify`, headers })).json<{ ok: boolean; entries: number }>();
      expect(after).toMatchObject({ ok: true, entries: before.entries + 1 });

      // Its job stayed in the source's queue; the target's orphan sweep queues it again.
      const done = await waitFor(async () => {
        const run = (await app.inject({ method: 'GET', url: `/api/agent/runs/${pendingRunId}`, headers })).json<AgentRun>();
        return run.status === 'COMPLETED' ? run : undefined;
      }, 'the copied PENDING agent run to complete on the target', 30_000);
      expect(done.answer).toBe('Three weeks of cough: see your doctor this week.');
    } finally {
      workers.stop();
      await app.close();
      await ctx.jobs?.stop();
      await ctx.trace.close();
    }
  }, 60_000);

  it('refuses a target that already holds data, naming what it found', async () => {
    const refusal = await rejectionOf(copyDatabase(source, target));
    expect(refusal).toMatchObject({ code: 'CONFLICT_STATE' });
    expect(refusal.message).toMatch(/not empty: it already holds .*projects \(\d+ rows?\).*Create an empty database/);
  });

  it('rolls back a copy that fails part-way, so the same command can run again on the same target', async () => {
    const fresh = await emptyTarget();
    try {
      // A late table refuses rows on the target, after its parents were written in the same transaction.
      await runMigrations(fresh);
      await fresh.db.execute(sql`ALTER TABLE pending_actions ADD CONSTRAINT copy_test_refuses CHECK (false) NOT VALID`);
      const failure = await rejectionOf(copyDatabase(source, fresh));
      expect(failure.message).toContain('The copy failed at pending_actions');
      expect(failure.message).toContain('Nothing was copied');
      expect(failure.message).toContain('run the same command again');
      for (const table of ['projects', 'trial_records', 'task_runs', 'audit_log']) {
        expect(await rowsOf(fresh.db, `SELECT count(*)::int AS n FROM ${table}`), table).toEqual([{ n: 0 }]);
      }
      await fresh.db.execute(sql`ALTER TABLE pending_actions DROP CONSTRAINT copy_test_refuses`);
      const retried = await copyDatabase(source, fresh);
      expect(retried.ok).toBe(true);
      // The trail is append-only again once the copy is done.
      const refused = await fresh.db.execute(sql`DELETE FROM audit_log`).then(() => undefined, (error: Error) => error);
      expect(String((refused?.cause as Error | undefined)?.message ?? refused)).toContain('append-only');
    } finally {
      await fresh.close();
    }
  }, 60_000);

  it('copies embeddings where the target has pgvector, and where it has not copies everything else, naming what it left', async () => {
    const withVectors = await openTestDatabase({ engine: 'pglite' });
    const fresh = await emptyTarget();
    try {
      await withVectors.db.execute(sql`INSERT INTO rag_collections (name, embedding_model, dimension) VALUES ('c1', 'test-model', 3)`);
      await withVectors.db.execute(sql`INSERT INTO rag_documents (id, scenario_id, collection, source_file, content_hash, chunk_count) VALUES ('d1', 's1', 'c1', 'a.md', 'h', 1)`);
      await withVectors.db.execute(sql`INSERT INTO rag_chunks (document_id, chunk_index, scenario_id, collection, content, start_offset, end_offset, embedding) VALUES ('d1', 0, 's1', 'c1', 'text', 0, 4, '[0.1,0.2,0.30000001]')`);
      const [available] = await rowsOf(fresh.db, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS yes");
      if (available!.yes) {
        expect((await copyDatabase(withVectors, fresh)).ok).toBe(true);
        expect(await rowsOf(fresh.db, 'SELECT embedding::text AS e FROM rag_chunks')).toEqual(await rowsOf(withVectors.db, 'SELECT embedding::text AS e FROM rag_chunks'));
      } else {
        // Issue 32: a trial that never used retrieval moved nowhere, because the first start had embedded a document.
        await withVectors.db.execute(sql`INSERT INTO projects (id, name) VALUES ('p-no-rag', 'Never used retrieval')`);
        const dry = await copyDatabase(withVectors, fresh, { dryRun: true });
        expect(dry.leftOut.map((t) => t.table).sort()).toEqual(['rag_chunks', 'rag_collections', 'rag_documents']);
        const report = await copyDatabase(withVectors, fresh);
        expect(report.ok).toBe(true);
        expect(report.leftOut.sort((a, b) => a.table.localeCompare(b.table))).toEqual([{ table: 'rag_chunks', rows: 1 }, { table: 'rag_collections', rows: 1 }, { table: 'rag_documents', rows: 1 }]);
        expect(report.documentsToIngest).toEqual([{ id: 'd1', scenarioId: 's1', collection: 'c1', sourceFile: 'a.md' }]);
        expect(report.tables.map((t) => t.table)).not.toContain('rag_documents');
        expect(await rowsOf(fresh.db, "SELECT id FROM projects WHERE id = 'p-no-rag'")).toEqual([{ id: 'p-no-rag' }]);
        expect(await rowsOf(fresh.db, 'SELECT count(*)::int AS n FROM rag_documents')).toEqual([{ n: 0 }]);
        expect(await rowsOf(fresh.db, "SELECT to_regclass('public.rag_chunks') IS NULL AS absent")).toEqual([{ absent: true }]);
      }
    } finally {
      await fresh.close();
      await withVectors.close();
    }
  }, 60_000);
});
