import type { PgTransactionConfig } from 'drizzle-orm/pg-core';
import type { Db } from './connect.js';

/**
 * Runs `work` in one transaction and hands it the transaction as a `Db`, so the same store functions serve inside
 * and outside one. Drizzle types the transaction apart from the database only for `rollback` and
 * `setTransaction`, which our code does not call; this is the one place that says so.
 */
export function withTransaction<T>(db: Db, work: (tx: Db) => Promise<T>, config?: PgTransactionConfig): Promise<T> {
  return db.transaction((tx) => work(tx as unknown as Db), config);
}
