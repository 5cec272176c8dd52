import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../http/server.js';
import { buildTestContext } from '../../testing/test-context.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY } from '../../testing/test-database.js';
import { appendAudit, listAudit } from '../audit/audit-log.js';
import { verifyAuditChain } from '../audit/verify-audit-chain.js';
import { createJobs } from '../jobs/boss.js';
import { createLogger } from '../logger.js';
import { openDatabase, queryRows, sql, type Database } from './connect.js';
import { runMigrations } from './migrate.js';

/**
 * The role the application connects as on PostgreSQL (migration 0005, docs/database-roles.md): migrations run as
 * the owner, the application as clinagent_app, which must not be able to edit the audit trail or switch off the
 * triggers that guard it. PGlite has only a superuser; there the hash chain is the guard (audit-chain.test.ts).
 */
const serverUrl = process.env.TEST_DATABASE_URL;
const APP_ROLE = 'clinagent_app';

/** The SQLSTATE and message PostgreSQL answered with (drizzle wraps the driver's error as `cause`). */
async function refusal(attempt: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await attempt;
  } catch (error) {
    const cause = ((error as { cause?: unknown }).cause ?? error) as { code?: string; message: string };
    return { code: cause.code, message: cause.message };
  }
  throw new Error('the statement was allowed');
}

function asRole(url: string, role: string): string {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = '';
  return parsed.toString();
}

describe.runIf(serverUrl)(`the application role on PostgreSQL${serverUrl ? '' : ' (skipped: needs TEST_DATABASE_URL)'}`, () => {
  let ownerUrl: string;
  let owner: Database;
  let app: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const throwaway = await createThrowawayDatabase(serverUrl!);
    ownerUrl = throwaway.url;
    drop = throwaway.drop;
    owner = await openDatabase({ databaseUrl: ownerUrl, poolSize: 2, auditKey: TEST_AUDIT_KEY });
    await runMigrations(owner);
    // The migration creates the role NOLOGIN; an administrator gives it LOGIN and a password (trust auth here).
    await owner.db.execute(sql.raw(`ALTER ROLE ${APP_ROLE} LOGIN`));
    app = await openDatabase({ databaseUrl: asRole(ownerUrl, APP_ROLE), poolSize: 4, auditKey: TEST_AUDIT_KEY });
    await appendAudit(owner.db, { projectId: 'roles', entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc', oldValue: { sbp: 120 }, newValue: { sbp: 130 } });
  });

  afterAll(async () => {
    await app?.close();
    await owner?.close();
    await drop?.();
  });

  it('is created by the migration as an ordinary role without rights to bypass triggers', async () => {
    const [role] = await queryRows<{ rolsuper: boolean; rolbypassrls: boolean; rolcreaterole: boolean }>(owner.db, sql`SELECT rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = ${APP_ROLE}`);
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, rolcreaterole: false });
    const [me] = await queryRows<{ current_user: string }>(app.db, sql`SELECT current_user`);
    expect(me!.current_user).toBe(APP_ROLE);
  });

  it('writes audit entries through appendAudit and reads the trail, chained', async () => {
    await appendAudit(app.db, { projectId: 'roles', entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc', oldValue: { sbp: 130 }, newValue: { sbp: 140 } });

    expect((await listAudit(app.db, 'roles')).map((e) => e.newValue)).toEqual([{ sbp: 130 }, { sbp: 140 }]);
    expect(await verifyAuditChain(app.db, 'roles')).toMatchObject({ ok: true, entries: 2 });
  });

  it('cannot UPDATE, DELETE or TRUNCATE the audit trail', async () => {
    for (const statement of ["UPDATE audit_log SET new_value = '{\"sbp\": 999}'", 'DELETE FROM audit_log', 'TRUNCATE audit_log']) {
      expect(await refusal(app.db.execute(sql.raw(statement))), statement).toEqual({ code: '42501', message: 'permission denied for table audit_log' });
    }
  });

  it('cannot disable, drop or replace the triggers, nor switch them off with session_replication_role', async () => {
    for (const statement of ['ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only', 'ALTER TABLE audit_log DISABLE TRIGGER ALL', 'DROP TRIGGER audit_log_chain ON audit_log']) {
      expect(await refusal(app.db.execute(sql.raw(statement))), statement).toEqual({ code: '42501', message: expect.stringMatching(/^must be owner of (table|relation) audit_log$/) });
    }
    expect(await refusal(app.db.execute(sql.raw('CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$')))).toMatchObject({ code: '42501' });
    expect(await refusal(app.db.execute(sql.raw('SET session_replication_role = replica')))).toEqual({ code: '42501', message: 'permission denied to set parameter "session_replication_role"' });

    expect(await verifyAuditChain(owner.db, 'roles')).toMatchObject({ ok: true, entries: 2 });
  });

  it('may ask the owner to index rag_chunks only through a function that refuses anything but an index name, collection and vector type', async () => {
    const injected = await refusal(app.db.execute(sql`SELECT clinagent_create_collection_index(${'rag_hnsw_x" ON audit_log (id); --'}, ${'c'}, ${'vector(3)'}, ${'vector_cosine_ops'})`));
    expect(injected).toMatchObject({ code: '22023', message: expect.stringContaining('clinagent_create_collection_index: refused index') });
    expect(await refusal(app.db.execute(sql`SELECT clinagent_create_collection_index(${'rag_hnsw_x'}, ${'c'}, ${'vector(3)) tablespace pg_default; --'}, ${'vector_cosine_ops'})`))).toMatchObject({ code: '22023' });
  });

  it('cannot run the migrations, which only the owner role may', async () => {
    expect(await refusal(runMigrations(app))).toMatchObject({ code: '42501' });
  });

  it('runs the application: migrations over DATABASE_MIGRATION_URL, pg-boss in its own schema, the HTTP API audited and verifiable', async () => {
    const ctx = await buildTestContext({ database: app, env: { DATABASE_URL: asRole(ownerUrl, APP_ROLE), DATABASE_MIGRATION_URL: ownerUrl }, startJobs: true });
    const server = await buildServer(ctx, { serveConsole: false });
    try {
      const admin = await ctx.users.create({ name: 'role-admin', role: 'admin' });
      const auth = { authorization: `Bearer ${admin.token}` };
      const created = await server.inject({ method: 'POST', url: '/api/projects', headers: auth, payload: { id: 'role-trial', name: 'Role trial' } });
      expect(created.statusCode, created.body).toBe(201);
      const verify = await server.inject({ method: 'GET', url: '/api/iit/projects/role-trial/audit/verify', headers: auth });
      expect(verify.json()).toEqual({ projectId: 'role-trial', ok: true, entries: 1 });
      const [schema] = await queryRows<{ owner: string }>(owner.db, sql`SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = 'pgboss'`);
      expect(schema!.owner).toBe(APP_ROLE);
    } finally {
      await server.close();
      await ctx.jobs?.stop();
    }
  });

  it('hands an existing pgboss schema, installed while the application ran as the owner, to the role', async () => {
    const throwaway = await createThrowawayDatabase(serverUrl!);
    const before = await openDatabase({ databaseUrl: throwaway.url, poolSize: 2, auditKey: TEST_AUDIT_KEY });
    let afterwards: Database | undefined;
    try {
      await runMigrations(before);
      const asOwner = await createJobs(before, createLogger('silent'), { supervise: false, schedule: false });
      await asOwner.stop();

      await before.db.execute(sql`SELECT clinagent_grant_app_role()`);

      afterwards = await openDatabase({ databaseUrl: asRole(throwaway.url, APP_ROLE), poolSize: 2, auditKey: TEST_AUDIT_KEY });
      const asApp = await createJobs(afterwards, createLogger('silent'), { supervise: false, schedule: false });
      try {
        // A new queue is a new partition of pgboss.job: DDL that only the owner of that table may run.
        await asApp.boss.createQueue('role-handover');
        expect(await asApp.boss.send('role-handover', { n: 1 })).toEqual(expect.any(String));
      } finally {
        await asApp.stop();
      }
    } finally {
      await afterwards?.close();
      await before.close();
      await throwaway.drop();
    }
  });
});
