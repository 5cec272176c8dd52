import { queryRows, sql, type Db } from '../db/connect.js';

/** What the first entry of a project links to (the migration and the trigger use the same value). */
export const AUDIT_CHAIN_GENESIS = '0'.repeat(64);

export interface AuditChainVerification {
  projectId: string;
  /** True when every entry's hash matches its content and links to the entry before it. */
  ok: boolean;
  entries: number;
  /** The hash of the newest entry. Recorded outside the database (a report, a ticket), it also shows later deletion of the newest entries. */
  headHash: string | null;
  /** The first entry that does not verify: the altered entry itself, or the entry after a deleted or forged one. */
  firstBadEntryId?: number;
  problem?: string;
}

interface ChainRow {
  entries: string | number;
  head_hash: string | null;
  id: string | number | null;
  prev_hash: string | null;
  hash: string | null;
  expected_hash: string | null;
  previous_id: string | number | null;
  previous_hash: string | null;
}

/**
 * The canonical form (migration 0005, function audit_log_entry_hash), for anyone verifying an export outside
 * ClinAgent: sha256, hex, over the UTF-8 text of the jsonb array
 * `[prev_hash, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason]`, with
 * `at` written `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC and the values as PostgreSQL prints jsonb (`", "` and `": "`
 * separators, object keys shortest first). The first entry of a project links to 64 zeros.
 *
 * Recomputes every link of a project's audit chain: each entry's hash from its content
 * with the same canonical form the insert trigger used, and each entry's prev_hash against the entry before
 * it in id order. Reports the first entry that fails and why. Reads only; one query however long the trail.
 */
export async function verifyAuditChain(db: Db, projectId: string): Promise<AuditChainVerification> {
  const [row] = await queryRows<ChainRow>(
    db,
    sql`WITH chain AS (
          SELECT id, prev_hash, hash,
                 audit_log_entry_hash(prev_hash, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason) AS expected_hash,
                 lag(id) OVER (ORDER BY id) AS previous_id,
                 lag(hash) OVER (ORDER BY id) AS previous_hash
          FROM audit_log WHERE project_id = ${projectId}
        )
        SELECT (SELECT count(*) FROM chain) AS entries,
               (SELECT hash FROM chain ORDER BY id DESC LIMIT 1) AS head_hash,
               bad.id, bad.prev_hash, bad.hash, bad.expected_hash, bad.previous_id, bad.previous_hash
        FROM (SELECT 1) AS one
        LEFT JOIN LATERAL (
          SELECT * FROM chain
          WHERE hash IS DISTINCT FROM expected_hash OR prev_hash IS DISTINCT FROM coalesce(previous_hash, ${AUDIT_CHAIN_GENESIS})
          ORDER BY id LIMIT 1
        ) AS bad ON true`,
  );
  const result: AuditChainVerification = { projectId, ok: true, entries: Number(row?.entries ?? 0), headHash: row?.head_hash ?? null };
  if (!row || row.id === null) return result;
  return { ...result, ok: false, firstBadEntryId: Number(row.id), problem: describeBreak(row) };
}

function describeBreak(row: ChainRow): string {
  const id = String(row.id);
  if (row.hash !== row.expected_hash) {
    return `entry ${id} does not match its hash: its content was changed after it was written, or it was written past the chain`;
  }
  if (row.previous_id === null) {
    return `entry ${id} is the first of the project but links to an earlier entry: the entries before it were deleted`;
  }
  return `entry ${id} does not link to entry ${String(row.previous_id)} before it: an entry between them was deleted, or entry ${String(row.previous_id)} was replaced`;
}

/** Every chain in the trail: each project id, plus the platform scope when users or tokens were audited. */
export async function listAuditChains(db: Db): Promise<string[]> {
  const rows = await queryRows<{ project_id: string }>(db, sql`SELECT DISTINCT project_id FROM audit_log ORDER BY project_id`);
  return rows.map((r) => r.project_id);
}
