import { queryRows, sql, type Db } from '../connect.js';
import { ClinAgentError } from '../../errors.js';
import { COPIED_SCHEMA, quoteIdent, type CopyTable } from './copy-plan.js';

/**
 * The one row `clinagent migrate` (or a start) writes into an empty database: the fingerprint of the audit key. A target
 * prepared that way with the same key is still empty for the copy, which replaces the row with the source's.
 */
const AUDIT_CHAIN_KEY_TABLE = 'audit_chain_key';

/**
 * Refuses a target that holds data in any of our tables. The copy never merges: ids, the audit chain and run states
 * would collide or interleave with what is there, and an overwrite would destroy it. There is deliberately no --force.
 * Tables missing on the target are fine (the copy's migration run creates them).
 */
export async function assertTargetEmpty(target: Db, tables: readonly string[], auditKeyFingerprint: string | undefined): Promise<void> {
  const existing = await queryRows<{ name: string }>(
    target,
    sql`SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${COPIED_SCHEMA} AND c.relkind IN ('r', 'p')`,
  );
  const present = new Set(existing.map((t) => t.name));
  const found: Array<{ table: string; rows: number }> = [];
  for (const table of tables.filter((t) => present.has(t))) {
    if (table === AUDIT_CHAIN_KEY_TABLE) {
      const [row] = await queryRows<{ other: string | number }>(target, sql`SELECT count(*) FILTER (WHERE fingerprint IS DISTINCT FROM ${auditKeyFingerprint ?? null}) AS other FROM audit_chain_key`);
      if (Number(row?.other ?? 0) > 0) found.push({ table, rows: Number(row!.other) });
      continue;
    }
    const [row] = await queryRows<{ n: string | number }>(target, sql.raw(`SELECT count(*) AS n FROM ${quoteIdent(COPIED_SCHEMA)}.${quoteIdent(table)}`));
    if (Number(row?.n ?? 0) > 0) found.push({ table, rows: Number(row!.n) });
  }
  if (!found.length) return;
  const list = found.map((f) => `${f.table} (${f.rows} row${f.rows === 1 ? '' : 's'})`).join(', ');
  throw new ClinAgentError(
    'CONFLICT_STATE',
    `The target database is not empty: it already holds ${list}. \`clinagent db copy\` writes only into an empty database, so nothing there is overwritten or mixed with the copy (ClinAgent may already have run on it). Create an empty database (for example \`createdb clinagent\`) and pass its URL with --to, or drop this database if its data is not needed.`,
    { tables: found },
  );
}

/** Tables with a pgvector column (vector, halfvec, sparsevec) that hold rows on the source. */
function tablesWithVectors(tables: readonly CopyTable[], counts: ReadonlyMap<string, number>): string[] {
  return tables.filter((t) => (counts.get(t.name) ?? 0) > 0 && t.columns.some((c) => /^(vector|halfvec|sparsevec)\b/.test(c.type))).map((t) => t.name);
}

/** A table the copy leaves behind, with its rows on the source. */
export interface LeftOutTable {
  table: string;
  rows: number;
}

/**
 * Embeddings need pgvector on the target; without it the migrations create no vector tables (retrieval is then
 * unavailable there, as on any server without pgvector). Rather than refuse the whole copy, as it did when the
 * first start had embedded a demo protocol nobody used, the copy leaves retrieval behind: the tables with vectors
 * and the tables that only they refer to (a document's row without its chunks would read as ingested, so a later
 * re-ingest would skip it as unchanged). Everything else is copied; the report lists what was left and how to
 * bring it back. Empty when the target has pgvector or the source holds no embeddings.
 */
export async function retrievalLeftOut(target: Db, tables: readonly CopyTable[], counts: ReadonlyMap<string, number>): Promise<LeftOutTable[]> {
  const vectorTables = tablesWithVectors(tables, counts);
  if (!vectorTables.length) return [];
  const [row] = await queryRows<{ available: boolean }>(target, sql`SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`);
  if (row?.available) return [];
  const left = new Set(vectorTables);
  // Parents that no copied table refers to go too; repeated until nothing changes (documents, then collections).
  for (let changed = true; changed; ) {
    changed = false;
    for (const table of tables) {
      if (left.has(table.name)) continue;
      const referrers = tables.filter((t) => t.parents.includes(table.name));
      if (referrers.length && referrers.every((t) => left.has(t.name))) {
        left.add(table.name);
        changed = true;
      }
    }
  }
  return tables.filter((t) => left.has(t.name)).map((t) => ({ table: t.name, rows: counts.get(t.name) ?? 0 }));
}

/**
 * The target's schema after its migration run must hold every source table with rows, with the same columns: same
 * ClinAgent version on both sides. A difference means one side was migrated by another version.
 */
export function assertSameSchema(source: readonly CopyTable[], target: readonly CopyTable[], counts: ReadonlyMap<string, number>): string[] {
  const byName = new Map(target.map((t) => [t.name, t]));
  const skipped: string[] = [];
  const problems: string[] = [];
  for (const table of source) {
    const other = byName.get(table.name);
    if (!other) {
      if ((counts.get(table.name) ?? 0) === 0) skipped.push(table.name);
      else problems.push(`table ${table.name} is missing on the target`);
      continue;
    }
    const columns = (t: CopyTable) => t.columns.map((c) => `${c.name} ${c.type}`).join(', ');
    if (columns(table) !== columns(other)) problems.push(`table ${table.name} has columns (${columns(table)}) on the source but (${columns(other)}) on the target`);
  }
  if (problems.length) {
    throw new ClinAgentError(
      'CONFLICT_STATE',
      `The source and the target schemas differ after migrating: ${problems.join('; ')}. Run the copy with the ClinAgent version that last ran on the source (it migrates both sides to its own schema). Nothing was copied.`,
      { problems },
    );
  }
  return skipped;
}
