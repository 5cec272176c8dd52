import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { AUDIT_KEY_SETTINGS } from '../core/audit/audit-key.js';
import { queryRows, sql, type Database } from '../core/db/connect.js';
import { migrationsFolder } from '../core/paths.js';
import { openTestDatabase, PGLITE_TEMPLATE_ENV, POSTGRES_TEMPLATE_ENV, TEST_AUDIT_KEY, testEngines } from './test-database.js';

/**
 * Test databases start as copies of a migrated template (src/testing/database-templates.ts). A copy must be
 * what a fresh database was: every migration applied, the audit key set, and nothing shared with another copy.
 */
const journal = JSON.parse(readFileSync(path.join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> };

describe('the vitest global setup', () => {
  it('hands the test workers a PGlite template, and a PostgreSQL one when TEST_DATABASE_URL is set', async () => {
    expect(process.env[PGLITE_TEMPLATE_ENV]).toMatch(/pglite-[0-9a-f]{16}\.tar$/);
    if (!process.env.TEST_DATABASE_URL) {
      expect(process.env[POSTGRES_TEMPLATE_ENV]).toBeUndefined();
      return;
    }
    expect(process.env[POSTGRES_TEMPLATE_ENV]).toMatch(/^clinagent_template_[0-9a-f]{16}$/);
    // Closed to connections, so a copy is never refused because a session is open on the template.
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ datallowconn: boolean }>('SELECT datallowconn FROM pg_database WHERE datname = $1', [process.env[POSTGRES_TEMPLATE_ENV]]);
      expect(rows).toEqual([{ datallowconn: false }]);
    } finally {
      await admin.end();
    }
  });
});

describe.each(testEngines())('openTestDatabase from the template, on %s', (engine) => {
  const opened: Database[] = [];
  const open = async () => {
    const database = await openTestDatabase({ engine });
    opened.push(database);
    return database;
  };

  afterAll(async () => {
    for (const database of opened) await database.close();
  });

  it('gives a database with every migration applied and the audit key in its session', async () => {
    const { db } = await open();
    const [applied] = await queryRows<{ count: number }>(db, sql`SELECT count(*)::int AS count FROM drizzle.__drizzle_migrations`);
    expect(applied!.count).toBe(journal.entries.length);
    // Session settings are not in a dumped data folder: openDatabase must still give every session the key.
    const [session] = await queryRows<{ fingerprint: string }>(db, sql`SELECT current_setting(${AUDIT_KEY_SETTINGS.fingerprint}, true) AS fingerprint`);
    expect(session!.fingerprint).toBe(TEST_AUDIT_KEY.sessionSettings().fingerprint);
  });

  it('gives each caller its own copy: a row written in one is not in another', async () => {
    const first = await open();
    const second = await open();
    await first.db.execute(sql`INSERT INTO projects (id, name) VALUES ('only-in-first', 'First')`);
    const inFirst = await queryRows<{ id: string }>(first.db, sql`SELECT id FROM projects WHERE id = 'only-in-first'`);
    const inSecond = await queryRows<{ id: string }>(second.db, sql`SELECT id FROM projects WHERE id = 'only-in-first'`);
    expect(inFirst).toHaveLength(1);
    expect(inSecond).toEqual([]);
  });
});
