import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { auditLog } from '../db/schema/audit.js';
import { ClinAgentError } from '../errors.js';
import type { AuditEntityType } from '../db/schema/audit.js';

export type { AuditEntityType };
export { PLATFORM_AUDIT_SCOPE } from '../db/schema/audit.js';
export { verifyAuditChain } from './verify-audit-chain.js';

export interface AuditEntryInput {
  projectId: string;
  entityType: AuditEntityType;
  entityId: string;
  action: string;
  actor: string;
  oldValue?: unknown;
  newValue?: unknown;
  reason?: string;
}

export interface AuditEntry {
  id: number;
  projectId: string;
  entityType: AuditEntityType;
  entityId: string;
  action: string;
  actor: string;
  at: string;
  oldValue: unknown;
  newValue: unknown;
  reason: string;
}

/**
 * The one writer of the append-only audit trail (who, when, what, old and new value, why). Callers pass
 * their own transaction as `db`, so the entry commits or rolls back with the change it describes: an audit
 * entry for a change that never happened, or a change without its entry, would both break GCP traceability.
 * The database assigns id, time and the hash chain (trigger audit_log_chain, migration 0005); the chain lock
 * is held until the caller's transaction ends, so keep transactions that write audit entries short.
 */
export async function appendAudit(db: Db, entry: AuditEntryInput): Promise<void> {
  await appendAuditEntries(db, [entry]);
}

/**
 * Entries per statement (one JSON parameter each). Bounded so one statement stays short: on the embedded database
 * it runs on the server's thread, which gets a turn between statements.
 */
const ENTRIES_PER_INSERT = 1000;
/**
 * Characters of JSON per statement: an import's entries carry whole records (10 000 fields, long notes), and a
 * thousand of those in one statement held the embedded database, and so the server, for seconds.
 */
const JSON_CHARS_PER_INSERT = 256 * 1024;

/**
 * Several entries in as few statements as possible (a QC batch writes thousands). The entries travel as one JSON
 * parameter unpacked by the database, in order (the trigger chains them in the order they are inserted): binding
 * nine parameters per entry cost more than the database's own work of chaining and signing them.
 */
export async function appendAuditEntries(db: Db, entries: ReadonlyArray<AuditEntryInput>): Promise<void> {
  entries.forEach(assertComplete);
  let batch: string[] = [];
  let chars = 0;
  let statements = 0;
  const insert = async () => {
    if (statements++ > 0) await yieldToEventLoop();
    await db.execute(sql`
      INSERT INTO ${auditLog} (project_id, entity_type, entity_id, action, actor, old_value, new_value, reason)
      SELECT v.project_id, v.entity_type, v.entity_id, v.action, v.actor, v.old_value, v.new_value, v.reason
      FROM ROWS FROM (jsonb_to_recordset(${`[${batch.join(',')}]`}::jsonb) AS (project_id text, entity_type text, entity_id text, action text, actor text, old_value jsonb, new_value jsonb, reason text))
        WITH ORDINALITY AS v(project_id, entity_type, entity_id, action, actor, old_value, new_value, reason, n)
      ORDER BY v.n`);
    batch = [];
    chars = 0;
  };
  for (const entry of entries) {
    const json = JSON.stringify({
      project_id: entry.projectId,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      action: entry.action,
      actor: entry.actor,
      old_value: entry.oldValue ?? null,
      new_value: entry.newValue ?? null,
      reason: entry.reason ?? '',
    });
    if (batch.length > 0 && (batch.length >= ENTRIES_PER_INSERT || chars + json.length > JSON_CHARS_PER_INSERT)) await insert();
    batch.push(json);
    chars += json.length;
  }
  if (batch.length > 0) await insert();
}

/** An entry without "who" or "what" is worthless to an inspector, so it is refused before it is written. */
function assertComplete(entry: AuditEntryInput): void {
  for (const key of ['projectId', 'entityId', 'action', 'actor'] as const) {
    if (!entry[key]?.trim()) {
      throw new ClinAgentError('VALIDATION_FAILED', `Audit entry has no ${key}. Pass the ${key} of the change being recorded.`, { field: key });
    }
  }
}

export async function listAudit(db: Db, projectId: string, filter: { entityType?: AuditEntityType; entityId?: string } = {}): Promise<AuditEntry[]> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.projectId, projectId),
        filter.entityType === undefined ? undefined : eq(auditLog.entityType, filter.entityType),
        filter.entityId === undefined ? undefined : eq(auditLog.entityId, filter.entityId),
      ),
    )
    .orderBy(asc(auditLog.id));
  // The chain hashes stay in the database: a hash over an entry whose identifier values a reader sees masked
  // would let that reader test guesses (a birth date has few thousand candidates) until one matches.
  return rows.map(({ prevHash: _prevHash, hash: _hash, ...row }) => ({ ...row, at: row.at.toISOString(), reason: row.reason }));
}
