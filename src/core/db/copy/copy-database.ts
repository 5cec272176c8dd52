import { readAuditChainKey } from '../../audit/audit-chain-key.js';
import { ClinAgentError, errorMessage } from '../../errors.js';
import { queryRows, sql, type Database, type Db } from '../connect.js';
import { runMigrations } from '../migrate.js';
import { countRows, planCopy, type CopyPlan } from './copy-plan.js';
import { clearSeededRows, copyRows, readSequences, restoreUserTriggers, withoutUserTriggers, writeSequences, type CopyProgress } from './copy-rows.js';
import { assertSameSchema, assertTargetEmpty, retrievalLeftOut, type LeftOutTable } from './target-checks.js';
import { compareCounts, readAuditHeads, verifyCopiedAudit, type AuditCopyCheck, type AuditHeads, type TableCount } from './verify-copy.js';
import { withTransaction } from '../transaction.js';

export type { CopyProgress } from './copy-rows.js';
export type { TableCount, AuditCopyCheck } from './verify-copy.js';
export type { LeftOutTable } from './target-checks.js';

/** A document whose embeddings were left behind: what to ingest again where pgvector is. */
export interface DocumentToIngest {
  id: string;
  scenarioId: string;
  collection: string;
  sourceFile: string;
}

interface CopyDatabaseOptions {
  /** Make every check and report what would be copied, writing nothing on either side. */
  dryRun?: boolean;
  /** Called when a table starts, with its row count, so a caller can decide to show a progress bar. */
  onTableStart?: (table: string, total: number) => void;
  onProgress?: (progress: CopyProgress) => void;
}

export interface CopyDatabaseReport {
  dryRun: boolean;
  /** Every table of the schema with its rows on the source and (after the copy) on the target. */
  tables: TableCount[];
  /** Empty source tables the target has no place for (rag_chunks on a server without pgvector). */
  skipped: string[];
  /**
   * Tables with rows left behind because the target has no pgvector: the embeddings (rag_chunks) and the rows that
   * only describe them (rag_documents, rag_collections). Not counted in `tables`; `ok` does not depend on them.
   */
  leftOut: LeftOutTable[];
  /** The documents of the left-out tables, to ingest again on a server with pgvector. */
  documentsToIngest: DocumentToIngest[];
  sequences: number;
  /** Null on a dry run. */
  audit: AuditCopyCheck | null;
  /** Every count matches and every audit chain verifies on the target with the source's entries and head. */
  ok: boolean;
}

/**
 * Copies every row of ClinAgent's schema from `source` (normally the embedded PGlite) into an empty `target`
 * (normally a PostgreSQL server), then verifies the row count of every table and every audit chain on the target.
 *
 * - Refuses a target that holds data. On a target without pgvector, leaves the embeddings behind (and the rows
 *   that only describe them) instead of refusing: a trial that never used retrieval still moves, and the report
 *   says what was left and what to ingest again. Then migrates the target and checks the two schemas agree.
 * - One transaction on the target for all tables, in one snapshot of the source: a copy that fails part-way (a
 *   full disk, a dropped connection, a killed process) leaves the target with the schema and no rows, so the same
 *   command can simply run again. The alternative, a transaction per table with resume, would leave a target that
 *   looks usable while half its trials are missing.
 * - The audit trail keeps its ids, times and hashes (the chain trigger is off for the copy; see withoutUserTriggers)
 *   and is verified on the target with the audit key, which the target connection must carry.
 * - The pg-boss job queue (schema `pgboss`) is not copied. Its rows are the queue's working state for the pg-boss
 *   version and the processes of the old installation (locks, retry timers, partitions per queue); the target's
 *   first start creates its own. What a job stood for lives in our tables: a QC or agent run that was PENDING or
 *   RUNNING is copied as such and the orphan sweep of the target's workers queues it again (it re-queues runs that
 *   have no job), and cron schedules are registered again at every start. So nothing queued is lost.
 */
export async function copyDatabase(source: Database, target: Database, options: CopyDatabaseOptions = {}): Promise<CopyDatabaseReport> {
  const plan = await planCopy(source.db);
  const names = plan.tables.map((t) => t.name);
  const counts = await countRows(source.db, names);
  await assertTargetEmpty(target.db, names, target.auditKey?.fingerprint);
  const leftOut = await retrievalLeftOut(target.db, plan.tables, counts);
  const isLeft = (table: string) => leftOut.some((t) => t.table === table);
  const documentsToIngest = isLeft('rag_documents') ? await documentsOf(source.db) : [];
  await assertAuditKeyFits(source.db, target, counts.get('audit_log') ?? 0);
  if (options.dryRun) {
    const tables = names.filter((table) => !isLeft(table)).map((table) => ({ table, source: counts.get(table) ?? 0, target: 0 }));
    return { dryRun: true, tables, skipped: [], leftOut, documentsToIngest, sequences: plan.sequences.length, audit: null, ok: true };
  }
  await runMigrations(target);
  const targetPlan = await planCopy(target.db);
  const skipped = assertSameSchema(plan.tables.filter((t) => !isLeft(t.name)), targetPlan.tables, counts);
  const copied = plan.tables.filter((t) => !skipped.includes(t.name) && !isLeft(t.name));
  const sequences = plan.sequences.filter((s) => targetPlan.sequences.includes(s));
  const snapshot = await withTransaction(source.db, async (from) => {
      const snapshotCounts = await countRows(from, copied.map((t) => t.name));
      const heads = names.includes('audit_log') ? await readAuditHeads(from) : new Map() as AuditHeads;
      const positions = await readSequences(from, sequences);
      await copyInOneTransaction(from, target.db, { ...plan, tables: copied }, snapshotCounts, positions, options);
      return { snapshotCounts, heads };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  const tables = await compareCounts(target.db, snapshot.snapshotCounts, copied.map((t) => t.name));
  const audit = await verifyCopiedAudit(target.db, snapshot.heads);
  return { dryRun: false, tables, skipped, leftOut, documentsToIngest, sequences: sequences.length, audit, ok: audit.ok && tables.every((t) => t.source === t.target) };
}

async function documentsOf(source: Db): Promise<DocumentToIngest[]> {
  const rows = await queryRows<{ id: string; scenario_id: string; collection: string; source_file: string }>(source, sql`SELECT id, scenario_id, collection, source_file FROM rag_documents ORDER BY scenario_id, source_file, id`);
  return rows.map((r) => ({ id: r.id, scenarioId: r.scenario_id, collection: r.collection, sourceFile: r.source_file }));
}

async function copyInOneTransaction(
  source: Db,
  targetDb: Db,
  plan: CopyPlan,
  totals: ReadonlyMap<string, number>,
  positions: Awaited<ReturnType<typeof readSequences>>,
  options: CopyDatabaseOptions,
): Promise<void> {
  let current = '';
  try {
    await withTransaction(targetDb, async (target) => {
      const names = plan.tables.map((t) => t.name);
      current = '(preparing the target)';
      const triggered = await withoutUserTriggers(target, names);
      await clearSeededRows(target, names);
      for (const table of plan.tables) {
        current = table.name;
        const total = totals.get(table.name) ?? 0;
        options.onTableStart?.(table.name, total);
        await copyRows(source, target, table, total, options.onProgress);
      }
      current = '(sequences)';
      await writeSequences(target, positions);
      await restoreUserTriggers(target, triggered);
    });
  } catch (error) {
    const denied = (error as { code?: string }).code === '42501';
    throw new ClinAgentError(
      'INTERNAL',
      `The copy failed at ${current}: ${errorMessage(error)}. Nothing was copied: the copy is one transaction on the target, which was rolled back, so the target has the migrated schema and no rows. ${denied ? 'Connect to the target as the role that owns its tables (the one migrations run as, not the application role of docs/database-roles.md), then run the same command again.' : 'Fix the cause and run the same command again; there is nothing to drop first.'}`,
      { table: current },
      { cause: error },
    );
  }
}

/**
 * The audit trail verifies only with the key it was chained with. Checked before writing: a copy verified with
 * another key would read as tampered throughout.
 */
async function assertAuditKeyFits(source: Db, target: Database, auditEntries: number): Promise<void> {
  if (auditEntries === 0) return;
  if (!target.auditKey) {
    throw new ClinAgentError('CONFIG_MISSING', `The source has ${auditEntries} audit entries, which can only be verified on the target with the audit key; open the target with it (ClinAgent reads it from AUDIT_KEY or AUDIT_KEY_FILE, by default the file beside the data folder).`, { field: 'AUDIT_KEY' });
  }
  const recorded = await readAuditChainKey(source);
  if (recorded && recorded.fingerprint !== target.auditKey.fingerprint) {
    throw new ClinAgentError(
      'CONFIG_INVALID',
      `The source's audit trail is chained with the key of fingerprint ${recorded.fingerprint}, but this process has the key of fingerprint ${target.auditKey.fingerprint} (${target.auditKey.source}). Set AUDIT_KEY or AUDIT_KEY_FILE to the key the server uses for this data (by default <DATA_DIR>.audit-key), then copy again. Nothing was written.`,
      { field: 'AUDIT_KEY', recordedFingerprint: recorded.fingerprint, fingerprint: target.auditKey.fingerprint },
    );
  }
}
