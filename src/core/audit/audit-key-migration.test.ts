import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database } from '../db/connect.js';
import { auditLog } from '../db/schema/audit.js';
import { runMigrations } from '../db/migrate.js';
import { migrationsFolder } from '../paths.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY, testEngines } from '../../testing/test-database.js';
import type { AuditKey } from './audit-key.js';
import { appendAudit, listAudit } from './audit-log.js';
import { readAuditChainKey } from './audit-chain-key.js';
import { verifyAuditChain } from './verify-audit-chain.js';

/** The migrations as they were before the chain was keyed: 0008 and later left out of the journal. */
async function migrationsBeforeKey(): Promise<{ folder: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'clinagent-migrations-'));
  await cp(migrationsFolder(), dir, { recursive: true });
  const journalFile = path.join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: Array<{ idx: number }> };
  journal.entries = journal.entries.filter((entry) => entry.idx < 8);
  await writeFile(journalFile, JSON.stringify(journal));
  return { folder: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Migration 0008 on an installation that already has a trail chained with plain sha256 (0005), and on a new one. */
describe.each(testEngines())('migration 0008 keying the audit chain (%s)', (engine) => {
  let cleanup: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const step of cleanup) await step();
    cleanup = [];
  });

  /** A database migrated up to 0007, opened with `auditKey` (or none), as the upgrade finds it. */
  async function databaseBeforeKey(auditKey: AuditKey | undefined): Promise<Database> {
    const before = await migrationsBeforeKey();
    cleanup.push(before.remove);
    let database: Database;
    if (engine === 'pglite') {
      database = await openDatabase({ auditKey });
      await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: before.folder });
    } else {
      const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
      cleanup.push(throwaway.drop);
      database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 2, auditKey });
      const client = await database.pool!.connect();
      try {
        await migratePg(drizzlePg({ client }), { migrationsFolder: before.folder });
      } finally {
        client.release();
      }
    }
    cleanup.unshift(() => database.close());
    return database;
  }

  /** Entries written by the 0005 trigger, which needs no key; in project old-broken, entry 2 then edited past the trigger. */
  async function writeUnkeyedTrail(database: Database): Promise<{ ok: number[]; broken: number[] }> {
    for (const projectId of ['old-ok', 'old-broken', 'old-ok']) {
      await appendAudit(database.db, { projectId, entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc', newValue: { sbp: 120 } });
    }
    for (let n = 0; n < 2; n++) await appendAudit(database.db, { projectId: 'old-broken', entityType: 'record', entityId: 'S002', action: 'update', actor: 'crc', newValue: { n } });
    const broken = (await listAudit(database.db, 'old-broken')).map((e) => e.id);
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
      await tx.execute(sql`UPDATE audit_log SET actor = 'someone-else' WHERE id = ${broken[1]!}`);
      await tx.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
    });
    return { ok: (await listAudit(database.db, 'old-ok')).map((e) => e.id), broken };
  }

  it('signs an intact trail with the key, so it verifies and new entries link to its head', async () => {
    const database = await databaseBeforeKey(TEST_AUDIT_KEY);
    const { ok } = await writeUnkeyedTrail(database);

    await runMigrations(database);

    expect(await verifyAuditChain(database.db, 'old-ok')).toMatchObject({ ok: true, entries: 2 });
    expect(await readAuditChainKey(database.db)).toMatchObject({ fingerprint: TEST_AUDIT_KEY.fingerprint });
    await appendAudit(database.db, { projectId: 'old-ok', entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc', newValue: { sbp: 130 } });
    const rows = await database.db.select().from(auditLog).where(sql`project_id = 'old-ok'`).orderBy(auditLog.id);
    expect(rows.map((r) => r.id).slice(0, 2)).toEqual(ok);
    expect(rows[2]!.prevHash).toBe(rows[1]!.hash);
    expect(await verifyAuditChain(database.db, 'old-ok')).toMatchObject({ ok: true, entries: 3 });
  });

  it('leaves a chain that was already broken before the upgrade broken at the same entry, rather than signing over it', async () => {
    const database = await databaseBeforeKey(TEST_AUDIT_KEY);
    const { broken } = await writeUnkeyedTrail(database);

    await runMigrations(database);

    const result = await verifyAuditChain(database.db, 'old-broken');
    expect(result).toMatchObject({ ok: false, entries: 3, firstBadEntryId: broken[1] });
    expect(result.problem).toContain(`entry ${broken[1]} does not match its hash`);
  });

  it('refuses to upgrade a trail when the migrating connection has no key, and changes nothing', async () => {
    const database = await databaseBeforeKey(undefined);
    await writeUnkeyedTrail(database);
    const before = await queryRows<{ id: string; hash: string }>(database.db, sql`SELECT id, hash FROM audit_log ORDER BY id`);

    const failure = await runMigrations(database).then(
      () => 'migrated',
      (error: { cause?: { message?: string; hint?: string } }) => `${error.cause?.message} / ${error.cause?.hint}`,
    );

    expect(failure).toBe('migration 0008 signs the 5 existing audit entries with the audit key, but this connection has none / Apply migrations with ClinAgent itself (clinagent migrate, or start the server): it sets the key from AUDIT_KEY or AUDIT_KEY_FILE on every connection.');
    expect(await queryRows(database.db, sql`SELECT id, hash FROM audit_log ORDER BY id`)).toEqual(before);
    expect(await queryRows(database.db, sql`SELECT to_regclass('audit_chain_key') AS present`)).toEqual([{ present: null }]);
  });

  it('migrates a new database without a key, and records the key of the first session that writes', async () => {
    // One database reached twice: a PGlite data folder, or a throwaway PostgreSQL database.
    let open: (auditKey?: AuditKey) => Promise<Database>;
    if (engine === 'pglite') {
      const workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-key-'));
      cleanup.push(() => rm(workDir, { recursive: true, force: true }));
      open = (auditKey) => openDatabase({ dataDir: path.join(workDir, 'data'), auditKey });
    } else {
      const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
      cleanup.push(throwaway.drop);
      open = (auditKey) => openDatabase({ databaseUrl: throwaway.url, poolSize: 1, auditKey });
    }
    const unkeyed = await open(undefined);
    try {
      await runMigrations(unkeyed);
      expect(await readAuditChainKey(unkeyed.db)).toBeNull();
    } finally {
      await unkeyed.close();
    }

    const keyed = await open(TEST_AUDIT_KEY);
    cleanup.unshift(() => keyed.close());
    await appendAudit(keyed.db, { projectId: 'new', entityType: 'record', entityId: 'S001', action: 'create', actor: 'import' });
    expect(await readAuditChainKey(keyed.db)).toMatchObject({ fingerprint: TEST_AUDIT_KEY.fingerprint });
    expect(await verifyAuditChain(keyed.db, 'new')).toMatchObject({ ok: true, entries: 1 });
  });
});
