import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrationsFolder } from '../paths.js';
import { openDatabase, queryRows, sql, type Database, type Db } from './connect.js';

/** Any fixed number works; it only has to be the same in every ClinAgent process. */
const MIGRATION_LOCK_KEY = 720_417_001;

/**
 * Applies the committed SQL migrations. On PostgreSQL several processes (server, workers) may start at
 * once, so the migration runs under an advisory lock held on one dedicated connection.
 */
export async function runMigrations(database: Database): Promise<void> {
  if (database.engine === 'pglite') {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: migrationsFolder() });
    return;
  }
  const client = await database.pool!.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await migratePg(drizzlePg({ client }), { migrationsFolder: migrationsFolder() });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/**
 * Applies the migrations for a process about to use `database`. With a migration URL (DATABASE_MIGRATION_URL,
 * PostgreSQL only) they run over a short-lived connection as the owner role, because the application role it
 * connects as otherwise may neither alter tables nor switch off the audit trail's triggers (docs/database-roles.md).
 * That connection carries the same audit key: a migration may sign existing audit entries with it (0008).
 */
export async function migrateDatabase(database: Database, migrationUrl?: string): Promise<void> {
  if (!migrationUrl || database.engine !== 'postgres') return runMigrations(database);
  const owner = await openDatabase({ databaseUrl: migrationUrl, poolSize: 1, auditKey: database.auditKey });
  try {
    await runMigrations(owner);
  } finally {
    await owner.close();
  }
}

/** False on a PostgreSQL server without pgvector, where the conditional rag migration created nothing. */
export async function hasVectorStore(db: Db): Promise<boolean> {
  const [row] = await queryRows<{ present: boolean }>(db, sql`SELECT to_regclass('rag_chunks') IS NOT NULL AS present`);
  return row?.present === true;
}
