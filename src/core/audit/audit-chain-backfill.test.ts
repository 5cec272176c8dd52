import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, sql, type Database } from '../db/connect.js';
import { auditLog } from '../db/schema/audit.js';
import { runMigrations } from '../db/migrate.js';
import { migrationsFolder } from '../paths.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY, testEngines } from '../../testing/test-database.js';
import { appendAudit } from './audit-log.js';
import { AUDIT_CHAIN_GENESIS, verifyAuditChain } from './verify-audit-chain.js';

/** The migrations as they were before the chain: 0005 and later left out of the journal. */
async function migrationsBeforeChain(): Promise<{ folder: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'clinagent-migrations-'));
  await cp(migrationsFolder(), dir, { recursive: true });
  const journalFile = path.join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: Array<{ idx: number }> };
  journal.entries = journal.entries.filter((entry) => entry.idx < 5);
  await writeFile(journalFile, JSON.stringify(journal));
  return { folder: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** An installation upgraded to 0005 keeps its trail, now chained in id order, project by project (and keyed by 0008). */
describe.each(testEngines())('migration 0005 on an existing audit trail (%s)', (engine) => {
  let database: Database;
  let cleanup: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    const before = await migrationsBeforeChain();
    cleanup.push(before.remove);
    if (engine === 'pglite') {
      database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
      await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: before.folder });
    } else {
      const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
      cleanup.push(throwaway.drop);
      database = await openDatabase({ databaseUrl: throwaway.url, poolSize: 2, auditKey: TEST_AUDIT_KEY });
      const client = await database.pool!.connect();
      try {
        await migratePg(drizzlePg({ client }), { migrationsFolder: before.folder });
      } finally {
        client.release();
      }
    }
    cleanup.unshift(() => database.close());
    // A trail written before the chain existed, two projects interleaved.
    await database.db.execute(sql`
      INSERT INTO audit_log (project_id, entity_type, entity_id, action, actor, old_value, new_value, reason) VALUES
        ('old-a', 'record', 'S001', 'create', 'import', NULL, '{"sbp": 120}', ''),
        ('old-b', 'record', 'S001', 'create', 'import', NULL, '{"age": 57}', ''),
        ('old-a', 'record', 'S001', 'update', 'crc', '{"sbp": 120}', '{"sbp": 125}', 'typo'),
        ('old-a', 'query', 'q1', 'status:closed', 'dm', '{"status": "open"}', '{"status": "closed"}', 'resolved')`);
  });

  afterAll(async () => {
    for (const step of cleanup) await step();
    cleanup = [];
  });

  it('chains the entries already there in id order, so the trail verifies and new entries link to its head', async () => {
    await runMigrations(database);

    const rows = await database.db.select().from(auditLog).where(sql`project_id = 'old-a'`).orderBy(auditLog.id);
    expect(rows.map((r) => r.action)).toEqual(['create', 'update', 'status:closed']);
    expect(rows.map((r) => r.prevHash)).toEqual([AUDIT_CHAIN_GENESIS, rows[0]!.hash, rows[1]!.hash]);
    expect(await verifyAuditChain(database.db, 'old-a')).toMatchObject({ ok: true, entries: 3 });
    expect(await verifyAuditChain(database.db, 'old-b')).toMatchObject({ ok: true, entries: 1 });

    await appendAudit(database.db, { projectId: 'old-a', entityType: 'record', entityId: 'S001', action: 'update', actor: 'crc', newValue: { sbp: 130 } });
    const [newest] = await database.db.select().from(auditLog).where(sql`project_id = 'old-a'`).orderBy(sql`id DESC`).limit(1);
    expect(newest!.prevHash).toBe(rows[2]!.hash);
    expect(newest!.id).toBeGreaterThan(rows[2]!.id);
    expect(await verifyAuditChain(database.db, 'old-a')).toMatchObject({ ok: true, entries: 4 });
  });
});
