import { queryRows, sql, type Db } from '../connect.js';
import { ClinAgentError } from '../../errors.js';

/** One column as the copy moves it: its value as PostgreSQL's own text form, read back with the column's type. */
export interface CopyColumn {
  name: string;
  /** `format_type` of the column (`timestamp with time zone`, `jsonb`, `vector`, ...): the cast that reads the text back. */
  type: string;
}

export interface CopyTable {
  name: string;
  /** Every stored column in table order; generated columns are left out, the target computes them again. */
  columns: CopyColumn[];
  /** The primary key's columns: rows are read in that order, so the target's heap is laid out like a fresh load. */
  primaryKey: string[];
  /** Tables this one references (foreign keys to other tables of the schema). */
  parents: string[];
}

export interface CopyPlan {
  /** Every table of our schema, parents before children. */
  tables: CopyTable[];
  /** Every sequence of our schema; its position is copied, so new ids continue after the copied ones. */
  sequences: string[];
}

/**
 * The schema the copy covers: every table in `public`, which is where our migrations create every table (the Drizzle
 * schema and the hand-written ones such as rag_chunks). Read from the catalogue, not from a list in code, so a table a
 * later migration adds is copied without touching this. Left out on purpose: `drizzle` (the migration journal, which
 * the target's own migration run writes) and `pgboss` (the job queue: see copy-database.ts).
 */
export const COPIED_SCHEMA = 'public';

export async function planCopy(db: Db): Promise<CopyPlan> {
  const tableRows = await queryRows<{ name: string }>(
    db,
    sql`SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${COPIED_SCHEMA} AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`,
  );
  const columnRows = await queryRows<{ table_name: string; name: string; type: string }>(
    db,
    sql`SELECT c.relname AS table_name, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${COPIED_SCHEMA} AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
        ORDER BY c.relname, a.attnum`,
  );
  const keyRows = await queryRows<{ table_name: string; name: string }>(
    db,
    sql`SELECT c.relname AS table_name, a.attname AS name
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
        WHERE n.nspname = ${COPIED_SCHEMA} AND i.indisprimary ORDER BY c.relname, k.position`,
  );
  const foreignKeyRows = await queryRows<{ child: string; parent: string }>(
    db,
    sql`SELECT DISTINCT child.relname AS child, parent.relname AS parent
        FROM pg_constraint f
        JOIN pg_class child ON child.oid = f.conrelid JOIN pg_namespace cn ON cn.oid = child.relnamespace
        JOIN pg_class parent ON parent.oid = f.confrelid JOIN pg_namespace pn ON pn.oid = parent.relnamespace
        WHERE f.contype = 'f' AND cn.nspname = ${COPIED_SCHEMA} AND pn.nspname = ${COPIED_SCHEMA}`,
  );
  const sequenceRows = await queryRows<{ name: string }>(
    db,
    sql`SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${COPIED_SCHEMA} AND c.relkind = 'S' ORDER BY c.relname`,
  );
  const tables = tableRows.map(({ name }) => ({
    name,
    columns: columnRows.filter((c) => c.table_name === name).map(({ name: column, type }) => ({ name: column, type })),
    primaryKey: keyRows.filter((k) => k.table_name === name).map((k) => k.name),
    // A table referencing itself is loaded in one statement per batch; only other tables decide the order.
    parents: foreignKeyRows.filter((f) => f.child === name && f.parent !== name).map((f) => f.parent),
  }));
  return { tables: parentsFirst(tables), sequences: sequenceRows.map((s) => s.name) };
}

/**
 * Orders tables so each comes after every table it references (Kahn's algorithm, ties by name so two runs agree). The
 * target checks every foreign key as rows arrive, so a child row before its parent would fail the copy.
 */
function parentsFirst(tables: CopyTable[]): CopyTable[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const placed = new Set<string>();
  const ordered: CopyTable[] = [];
  while (ordered.length < tables.length) {
    const ready = tables.filter((t) => !placed.has(t.name) && t.parents.every((p) => placed.has(p) || !byName.has(p)));
    if (!ready.length) {
      const left = tables.filter((t) => !placed.has(t.name)).map((t) => t.name);
      throw new ClinAgentError('CONFLICT_STATE', `The tables ${left.join(', ')} reference each other in a cycle, so no order loads each after the tables it references. Make one of those foreign keys DEFERRABLE in a migration, then copy again.`, { tables: left });
    }
    for (const table of ready) {
      placed.add(table.name);
      ordered.push(table);
    }
  }
  return ordered;
}

/** A name as an SQL identifier, quoted so any name (mixed case, a keyword) reads as itself. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Row counts per table, in the caller's snapshot. */
export async function countRows(db: Db, tables: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const table of tables) {
    const [row] = await queryRows<{ n: string | number }>(db, sql.raw(`SELECT count(*) AS n FROM ${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table)}`));
    counts.set(table, Number(row?.n ?? 0));
  }
  return counts;
}
