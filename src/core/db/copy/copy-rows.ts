import { queryRows, sql, type Db } from '../connect.js';
import { COPIED_SCHEMA, quoteIdent, type CopyTable } from './copy-plan.js';

export interface CopyProgress {
  table: string;
  copied: number;
  total: number;
}

/**
 * Rows fetched from the source cursor at a time. The source holds no more than this many rows in memory whatever the
 * table's size (PGlite materialises each FETCH), which is what keeps the copy's memory flat on a large trial.
 */
const FETCH_ROWS = 1000;
/** A batch is sent early past this size: a few rows of long conversation turns or spans must not make one huge parameter. */
const MAX_BATCH_BYTES = 8 * 2 ** 20;

const CURSOR = 'clinagent_db_copy';

/**
 * Streams one table from the source to the target, inside the caller's transactions (a snapshot on the source, the
 * copy's one transaction on the target). Each value travels as PostgreSQL's own text form of it (`value::text`) and
 * is read back with the column's type, as pg_dump does: timestamps keep their microseconds (the audit chain hashes
 * them), numerics their digits, jsonb a JSON `null` apart from SQL NULL, vectors their floats. Returns the rows written.
 */
export async function copyRows(source: Db, target: Db, table: CopyTable, total: number, onProgress?: (progress: CopyProgress) => void): Promise<number> {
  if (!table.columns.length || total === 0) return 0;
  const name = `${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table.name)}`;
  const columns = table.columns.map((c) => quoteIdent(c.name));
  const orderBy = table.primaryKey.length ? ` ORDER BY ${table.primaryKey.map(quoteIdent).join(', ')}` : '';
  // An alias no column is named, so the row expression cannot be mistaken for a column.
  const select = `SELECT array_to_json(ARRAY[${columns.map((c) => `copy_source_row.${c}::text`).join(', ')}])::text AS r FROM ${name} AS copy_source_row${orderBy}`;
  const readBack = table.columns.map((c, i) => `(r->>${i})::${c.type}`).join(', ');
  // OVERRIDING SYSTEM VALUE keeps the source's values in identity columns (GENERATED ALWAYS would refuse them).
  const insertHead = `INSERT INTO ${name} (${columns.join(', ')}) OVERRIDING SYSTEM VALUE SELECT ${readBack} FROM json_array_elements(`;
  await source.execute(sql.raw(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${select}`));
  let copied = 0;
  try {
    for (;;) {
      const rows = await queryRows<{ r: string }>(source, sql.raw(`FETCH ${FETCH_ROWS} FROM ${CURSOR}`));
      if (!rows.length) break;
      let batch: string[] = [];
      let bytes = 0;
      for (const { r } of rows) {
        batch.push(r);
        bytes += r.length;
        if (bytes >= MAX_BATCH_BYTES) {
          await insertBatch(target, insertHead, batch);
          copied += batch.length;
          batch = [];
          bytes = 0;
        }
      }
      if (batch.length) await insertBatch(target, insertHead, batch);
      copied += batch.length;
      onProgress?.({ table: table.name, copied, total });
    }
  } finally {
    await source.execute(sql.raw(`CLOSE ${CURSOR}`)).catch(() => undefined);
  }
  return copied;
}

async function insertBatch(target: Db, insertHead: string, rows: string[]): Promise<void> {
  await target.execute(sql`${sql.raw(insertHead)}${`[${rows.join(',')}]`}::json) AS r`);
}

/**
 * Switches off the target's own triggers on every copied table for the copy's transaction. They are for new writes:
 * the audit trail's chain trigger would give each copied entry a new id, time and hash (breaking the chain it is
 * meant to protect). Foreign keys stay checked (their triggers are internal). Needs the owner of the tables, the role
 * the migrations ran as; the caller's commit or rollback switches them on again.
 */
export async function withoutUserTriggers(target: Db, tables: readonly string[]): Promise<string[]> {
  const triggered = await queryRows<{ name: string }>(
    target,
    sql`SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${COPIED_SCHEMA} AND NOT t.tgisinternal ORDER BY c.relname`,
  );
  const names = triggered.map((t) => t.name).filter((t) => tables.includes(t));
  for (const table of names) await target.execute(sql.raw(`ALTER TABLE ${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table)} DISABLE TRIGGER USER`));
  return names;
}

export async function restoreUserTriggers(target: Db, tables: readonly string[]): Promise<void> {
  for (const table of tables) await target.execute(sql.raw(`ALTER TABLE ${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table)} ENABLE TRIGGER USER`));
}

/** The source's position of each sequence, so ids drawn on the target continue after the copied ones. */
export async function readSequences(source: Db, sequences: readonly string[]): Promise<Array<{ name: string; lastValue: string; isCalled: boolean }>> {
  const out: Array<{ name: string; lastValue: string; isCalled: boolean }> = [];
  for (const name of sequences) {
    const [row] = await queryRows<{ last_value: string | number; is_called: boolean }>(source, sql.raw(`SELECT last_value, is_called FROM ${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(name)}`));
    if (row) out.push({ name, lastValue: String(row.last_value), isCalled: row.is_called });
  }
  return out;
}

export async function writeSequences(target: Db, sequences: ReadonlyArray<{ name: string; lastValue: string; isCalled: boolean }>): Promise<void> {
  for (const { name, lastValue, isCalled } of sequences) {
    await target.execute(sql`SELECT setval(${`${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(name)}`}::regclass, ${lastValue}::bigint, ${isCalled})`);
  }
}

/** Rows our migrations write themselves (the audit key's fingerprint): replaced by the source's within the copy. */
export async function clearSeededRows(target: Db, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    const name = `${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table)}`;
    const [row] = await queryRows<{ present: boolean }>(target, sql.raw(`SELECT EXISTS (SELECT 1 FROM ${name}) AS present`));
    if (row?.present) await target.execute(sql.raw(`DELETE FROM ${name}`));
  }
}
