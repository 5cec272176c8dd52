import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { auditKeyFromSecret } from '../core/audit/audit-key.js';
import { openDatabase, type Database } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';

/**
 * The audit key of every test database, fixed so that several contexts and processes on one database agree (a
 * test that reopens a data folder, a worker process given TEST_AUDIT_ENV). Never a production value.
 */
export const TEST_AUDIT_SECRET = 'clinagent-test-audit-key-not-for-production-0001';
export const TEST_AUDIT_KEY = auditKeyFromSecret(TEST_AUDIT_SECRET, 'the test audit key');
/** For child processes that load their configuration from the environment (the CLI, a worker). */
export const TEST_AUDIT_ENV = { AUDIT_KEY: TEST_AUDIT_SECRET } as const;

/**
 * Where the vitest global setup left the migrated templates (src/testing/database-templates.ts): a dumped PGlite
 * data folder and a PostgreSQL database name. Without them (a bench, a script) databases are built from scratch.
 */
export const PGLITE_TEMPLATE_ENV = 'CLINAGENT_TEST_PGLITE_TEMPLATE';
export const POSTGRES_TEMPLATE_ENV = 'CLINAGENT_TEST_POSTGRES_TEMPLATE';

let pgliteTemplate: Blob | undefined;

/** Read once per test worker; every PGlite it opens loads a copy. */
function loadPgliteTemplate(): Blob | undefined {
  const file = process.env[PGLITE_TEMPLATE_ENV];
  if (!file) return undefined;
  pgliteTemplate ??= new Blob([readFileSync(file)]);
  return pgliteTemplate;
}

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or a throwaway database on the
 * PostgreSQL server named by TEST_DATABASE_URL (dropped again by `close`). Same migrations, same code; every
 * session carries TEST_AUDIT_KEY, as ClinAgent's carry the configured audit key. Under vitest it starts as a
 * copy of the run's migrated template; runMigrations then finds nothing to apply, and would apply what a
 * template lacked.
 */
export async function openTestDatabase(options: { engine?: 'pglite' | 'postgres' } = {}): Promise<Database & { url?: string }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  const engine = options.engine ?? (serverUrl ? 'postgres' : 'pglite');
  if (engine === 'pglite') {
    const database = await openDatabase({ auditKey: TEST_AUDIT_KEY, loadDataDir: loadPgliteTemplate() });
    await runMigrations(database);
    return database;
  }
  if (!serverUrl) throw new Error('openTestDatabase({ engine: "postgres" }) needs TEST_DATABASE_URL');
  const { url, drop } = await createThrowawayDatabase(serverUrl, process.env[POSTGRES_TEMPLATE_ENV]);
  const database = await openDatabase({ databaseUrl: url, poolSize: 4, auditKey: TEST_AUDIT_KEY });
  await runMigrations(database);
  return {
    ...database,
    url,
    async close() {
      await database.close();
      await drop();
    },
  };
}

/** An empty database on the server (migration tests need one), or a copy of the database `template`. */
export async function createThrowawayDatabase(serverUrl: string, template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `clinagent_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * The engines data-layer tests run on: PGlite always, plus PostgreSQL when TEST_DATABASE_URL is set, so a
 * CI run proves both with `describe.each(testEngines())`.
 */
export function testEngines(): Array<'pglite' | 'postgres'> {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}
