import type { PGlite, Transaction } from '@electric-sql/pglite';

type Queryable = Pick<PGlite, 'query' | 'exec'> | Transaction;

/**
 * pg-boss's `db.executeSql` over the single PGlite connection. PGlite's own lock already serialises
 * query, exec and transaction, so no extra queue is needed. Three rules, each learned the hard way
 * (see shared/notes/pg-boss-on-pglite.md):
 * 1. With values the text is one statement: `query`.
 * 2. Without values it may be several (install, migrations, maintenance): `exec`, returning the last result
 *    that has columns; a `query`-only adapter fails at start() with "cannot insert multiple commands".
 * 3. Text starting with `BEGIN;` (pg-boss's locked plans) runs inside `transaction()`, so a failing statement
 *    rolls back instead of leaving the one shared connection in an aborted transaction for everyone.
 */
export function pgliteExecuteSql(db: Queryable | PGlite) {
  return {
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number }> {
      if (values && values.length > 0) {
        const result = await db.query(text, values as unknown[]);
        return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
      }
      if (/^\s*BEGIN\s*;/i.test(text) && 'transaction' in db) {
        const body = text.replace(/^\s*BEGIN\s*;/i, '').replace(/COMMIT\s*;?\s*$/i, '');
        const results = await db.transaction((tx) => tx.exec(body));
        return lastWithColumns(results);
      }
      return lastWithColumns(await db.exec(text));
    },
  };
}

function lastWithColumns(results: Array<{ rows: unknown[]; fields: unknown[]; affectedRows?: number }>): { rows: unknown[]; rowCount?: number } {
  for (let i = results.length - 1; i >= 0; i--) {
    const result = results[i]!;
    if (result.fields.length > 0) return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  }
  return { rows: [], rowCount: results.at(-1)?.affectedRows ?? 0 };
}
