import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { AUDIT_KEY_SETTINGS, type AuditKey } from '../audit/audit-key.js';
import { lockDataDir } from './data-dir-lock.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type DbEngine = 'pglite' | 'postgres';

export interface Database {
  db: Db;
  engine: DbEngine;
  /** The single PGlite connection (embedded engine only); pg-boss shares it through its executeSql adapter. */
  pglite?: PGlite;
  /** The node-postgres pool (server engine only). */
  pool?: pg.Pool;
  connectionString?: string;
  /** The audit key every session of this database carries; another connection to it (the migration URL) takes the same. */
  auditKey?: AuditKey;
  close(): Promise<void>;
}

interface OpenDatabaseOptions {
  /** A PostgreSQL URL; absent means embedded PGlite. */
  databaseUrl?: string;
  /** PGlite data folder; absent means in-memory (tests). */
  dataDir?: string;
  /**
   * In-memory PGlite only: start from this dumped data folder (`PGlite.dumpDataDir`) instead of an empty
   * cluster. Tests load one migrated template rather than paying initdb and every migration per database.
   */
  loadDataDir?: Blob;
  poolSize?: number;
  /**
   * How old the data folder's lock may get before another process may take it over (the owner refreshes it
   * every quarter of this). Tests shorten it; the default suits a real server.
   */
  lockStaleMs?: number;
  /**
   * Keys the audit hash chain (migration 0008): every session opened here carries it, so appendAudit and
   * verifyAuditChain work on any handle or transaction of this database. Without it the database refuses to
   * write audit entries, as it refuses anyone else who connects without ClinAgent's key.
   */
  auditKey?: AuditKey;
}

/**
 * A lock whose owner is a dead process on this host is taken over at once (data-dir-lock.ts); this rule is
 * for the rest (an owner on another host, on a network share; a lock of an older ClinAgent). The owner
 * refreshes the lock every 5 s; a lock nobody refreshed for 20 s belongs to a process that died. 20 s rather
 * than proper-lockfile's 10 s: PGlite runs queries on this process's own thread, and a long import or
 * migration must not block the refresh long enough for another process to think the server is dead and
 * open the same folder.
 */
const LOCK_STALE_MS = 20_000;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { auditKey } = options;
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      // pg-pool runs this on each new connection before anyone gets it, and fails the checkout if it fails, so
      // no session of the pool is ever without the key.
      verify: auditKey ? (client, done) => void client.query(SET_AUDIT_KEY_SQL, auditKeyParameters(auditKey)).then(() => done(), (error: Error) => done(error)) : undefined,
    });
    // An idle client that loses its server would otherwise crash the process with an unhandled 'error'.
    pool.on('error', () => undefined);
    // So would one checked out (a transaction holds one) when PostgreSQL restarts: pg-pool listens on idle clients
    // only. What ran on it fails with the error, and the pool drops the broken connection when it is released.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = drizzlePg({ client: pool, schema }) as unknown as Db;
    return { db, engine: 'postgres', pool, connectionString: options.databaseUrl, auditKey, close: () => pool.end() };
  }
  if (!options.dataDir) return openPglite(new PGlite({ extensions: { vector }, loadDataDir: options.loadDataDir }), auditKey, async () => undefined);
  mkdirSync(options.dataDir, { recursive: true });
  const release = await lockDataDir(options.dataDir, options.lockStaleMs ?? LOCK_STALE_MS);
  try {
    return await openPglite(new PGlite(options.dataDir, { extensions: { vector } }), auditKey, release);
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * Session-level (is_local false), so the settings outlive every transaction. Passed as parameters: PostgreSQL
 * logs a statement's text on errors, and parameters only with log_statement or log_min_duration_statement set.
 */
const SET_AUDIT_KEY_SQL = `SELECT set_config('${AUDIT_KEY_SETTINGS.innerPad}', $1, false), set_config('${AUDIT_KEY_SETTINGS.outerPad}', $2, false), set_config('${AUDIT_KEY_SETTINGS.fingerprint}', $3, false)`;

function auditKeyParameters(auditKey: AuditKey): string[] {
  const settings = auditKey.sessionSettings();
  return [settings.innerPad, settings.outerPad, settings.fingerprint];
}

async function openPglite(pglite: PGlite, auditKey: AuditKey | undefined, releaseLock: () => Promise<void>): Promise<Database> {
  let closing: Promise<void> | undefined;
  const close = async () => {
    try {
      await pglite.close();
    } finally {
      await releaseLock();
    }
  };
  try {
    await pglite.waitReady;
    // PGlite is one session for the whole process (pg-boss included): set once, it holds for every query.
    if (auditKey) await pglite.query(SET_AUDIT_KEY_SQL, auditKeyParameters(auditKey));
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  const db = drizzlePglite({ client: pglite, schema }) as unknown as Db;
  // Closing twice (a signal during shutdown) must neither close PGlite twice nor release a released lock.
  return { db, engine: 'pglite', pglite, auditKey, close: () => (closing ??= close()) };
}

/** Runs raw SQL and returns its rows; both drivers put them under `.rows`. */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

export { sql };
