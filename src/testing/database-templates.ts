import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { migrationsFolder, packageRoot } from '../core/paths.js';
import { PGLITE_TEMPLATE_ENV, POSTGRES_TEMPLATE_ENV, TEST_AUDIT_KEY } from './test-database.js';

/**
 * Migrated databases that test databases are copied from. A fresh PGlite pays initdb (seconds of WASM work)
 * and every migration; a fresh PostgreSQL database pays the migrations. With a few hundred test databases per
 * run that was a large share of CI, so each test database starts as a copy instead (PGlite `loadDataDir`,
 * PostgreSQL `CREATE DATABASE ... TEMPLATE`).
 *
 * A template is named after the migrations and the PGlite build it was made with, and kept: the next run
 * (the second Node in CI, a developer's single test file) reuses it, and a new migration makes a new one.
 * Returns the environment variables that tell openTestDatabase where the templates are.
 */
export async function prepareDatabaseTemplates(serverUrl: string | undefined): Promise<Record<string, string>> {
  const key = templateKey();
  const env: Record<string, string> = { [PGLITE_TEMPLATE_ENV]: await preparePgliteTemplate(key) };
  if (serverUrl) env[POSTGRES_TEMPLATE_ENV] = await preparePostgresTemplate(serverUrl, key);
  return env;
}

function templateKey(): string {
  const hash = createHash('sha256');
  const folder = migrationsFolder();
  for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = path.join(folder, file);
    if (file.endsWith('.sql') || file.endsWith('.json')) hash.update(file).update(readFileSync(full));
  }
  for (const name of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector']) {
    hash.update(readFileSync(path.join(packageRoot(), 'node_modules', name, 'package.json')));
  }
  return hash.digest('hex').slice(0, 16);
}

async function preparePgliteTemplate(key: string): Promise<string> {
  const folder = path.join(packageRoot(), 'node_modules', '.cache', 'clinagent-test-databases');
  const file = path.join(folder, `pglite-${key}.tar`);
  if (existsSync(file)) return file;
  mkdirSync(folder, { recursive: true });
  const database = await openDatabase({ auditKey: TEST_AUDIT_KEY });
  try {
    await runMigrations(database);
    // Uncompressed: gunzip in every test file would cost more than reading 40 MB from the page cache.
    const dump = await database.pglite!.dumpDataDir('none');
    // Written aside and renamed, so a run started at the same moment never reads half a file.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await database.close();
  }
  return file;
}

async function preparePostgresTemplate(serverUrl: string, key: string): Promise<string> {
  const name = `clinagent_template_${key}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount) return name;
    // Migrated under another name and renamed once done, so a concurrent run never copies a half-migrated one.
    const partial = `${name}_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${partial}`);
    const url = new URL(serverUrl);
    url.pathname = `/${partial}`;
    // Closed before any copy: PostgreSQL copies a template only while nobody is connected to it.
    const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 1, auditKey: TEST_AUDIT_KEY });
    try {
      await runMigrations(database);
    } finally {
      await database.close();
    }
    try {
      await admin.query(`ALTER DATABASE ${partial} RENAME TO ${name}`);
      // Nobody may connect to it, so a copy is never refused because a session is open on the template.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    } catch (error) {
      await admin.query(`DROP DATABASE IF EXISTS ${partial}`);
      // 42P04 duplicate_database: another run made the same template first; theirs serves.
      if ((error as { code?: string }).code !== '42P04') throw error;
    }
    return name;
  } finally {
    await admin.end();
  }
}
