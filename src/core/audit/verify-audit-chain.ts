import { queryRows, sql, type Db } from '../db/connect.js';
import { ClinAgentError } from '../errors.js';
import { AUDIT_KEY_SETTINGS } from './audit-key.js';
import { withTransaction } from '../db/transaction.js';

/** What the first entry of a project links to (the migrations and the trigger use the same value). */
export const AUDIT_CHAIN_GENESIS = '0'.repeat(64);

export interface AuditChainVerification {
  projectId: string;
  /** True when every entry's hash matches its content under the audit key and links to the entry before it. */
  ok: boolean;
  entries: number;
  /** The hash of the newest entry. Recorded outside the database (an anchor), it also shows later deletion of the newest entries. */
  headHash: string | null;
  /** The first entry that does not verify: the altered entry itself, or the entry after a deleted or forged one. */
  firstBadEntryId?: number;
  problem?: string;
}

/** The verification and the id of the newest entry, which an anchor records with its hash. */
interface AuditChainCheck extends AuditChainVerification {
  headId: number | null;
}

interface ChainRow {
  entries: string | number;
  head_id: string | number | null;
  head_hash: string | null;
  id: string | number | null;
  prev_hash: string | null;
  hash: string | null;
  expected_hash: string | null;
  previous_id: string | number | null;
  previous_hash: string | null;
}

/**
 * The canonical form (migrations 0005 and 0008), for anyone verifying an export outside ClinAgent: HMAC-SHA256
 * keyed with the audit key (the AUDIT_KEY text, or the key file's content without surrounding whitespace), hex,
 * over the UTF-8 text of the jsonb array
 * `[prev_hash, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason]`, with
 * `at` written `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC and the values as PostgreSQL prints jsonb (`", "` and `": "`
 * separators, object keys shortest first). The first entry of a project links to 64 zeros.
 *
 * Recomputes every link of a project's audit chain: each entry's hash from its content with the key this
 * connection carries (openDatabase's auditKey), and each entry's prev_hash against the entry before it in id
 * order. Reports the first entry that fails and why. Reads only.
 */
export async function verifyAuditChain(db: Db, projectId: string): Promise<AuditChainVerification> {
  const { headId: _headId, ...verification } = await checkAuditChain(db, projectId);
  return verification;
}

export async function checkAuditChain(db: Db, projectId: string): Promise<AuditChainCheck> {
  const row = await withTransaction(db, async (t) => {
    const [session] = await queryRows<{ has_key: boolean; search_path: string }>(
      t,
      sql`SELECT coalesce(current_setting(${AUDIT_KEY_SETTINGS.innerPad}, true), '') <> '' AS has_key, current_setting('search_path') AS search_path`,
    );
    if (!session?.has_key) {
      throw new ClinAgentError(
        'CONFIG_MISSING',
        'This database connection carries no audit key, so the audit chain cannot be verified. Open the database with the audit key it was written with (ClinAgent reads it from AUDIT_KEY or AUDIT_KEY_FILE).',
        { field: 'AUDIT_KEY' },
      );
    }
    // The recomputation is written out here with built-in functions only, found in pg_catalog first, rather than
    // calling audit_log_entry_mac: someone who can edit the trail can also replace a function of ours (or put one
    // in front of a built-in on the search path) with one that returns the stored hash.
    await t.execute(sql`SELECT set_config('search_path', 'pg_catalog, public', true)`);
    const [result] = await queryRows<ChainRow>(
      t,
      sql`WITH session_key AS (
            SELECT decode(current_setting(${AUDIT_KEY_SETTINGS.innerPad}), 'hex') AS inner_pad, decode(current_setting(${AUDIT_KEY_SETTINGS.outerPad}), 'hex') AS outer_pad
          ),
          chain AS (
            SELECT a.id, a.prev_hash, a.hash,
                   encode(sha256(k.outer_pad || sha256(k.inner_pad || convert_to(jsonb_build_array(a.prev_hash, a.id, a.project_id, a.entity_type, a.entity_id, a.action, a.actor,
                     to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), a.old_value, a.new_value, a.reason)::text, 'UTF8'))), 'hex') AS expected_hash,
                   lag(a.id) OVER (ORDER BY a.id) AS previous_id,
                   lag(a.hash) OVER (ORDER BY a.id) AS previous_hash
            FROM public.audit_log a CROSS JOIN session_key k WHERE a.project_id = ${projectId}
          ),
          head AS (SELECT id, hash FROM chain ORDER BY id DESC LIMIT 1)
          SELECT (SELECT count(*) FROM chain) AS entries, (SELECT id FROM head) AS head_id, (SELECT hash FROM head) AS head_hash,
                 bad.id, bad.prev_hash, bad.hash, bad.expected_hash, bad.previous_id, bad.previous_hash
          FROM (SELECT 1) AS one
          LEFT JOIN LATERAL (
            SELECT * FROM chain
            WHERE hash IS DISTINCT FROM expected_hash OR prev_hash IS DISTINCT FROM coalesce(previous_hash, ${AUDIT_CHAIN_GENESIS})
            ORDER BY id LIMIT 1
          ) AS bad ON true`,
    );
    // Inside a caller's transaction the setting would otherwise last until that transaction ends.
    await t.execute(sql`SELECT set_config('search_path', ${session.search_path}, true)`);
    return result;
  });
  const result: AuditChainCheck = {
    projectId,
    ok: true,
    entries: Number(row?.entries ?? 0),
    headHash: row?.head_hash ?? null,
    headId: row?.head_id === null || row?.head_id === undefined ? null : Number(row.head_id),
  };
  if (!row || row.id === null) return result;
  return { ...result, ok: false, firstBadEntryId: Number(row.id), problem: describeBreak(row) };
}

function describeBreak(row: ChainRow): string {
  const id = String(row.id);
  if (row.hash !== row.expected_hash) {
    return `entry ${id} does not match its hash: its content was changed after it was written, it was written past the chain, or it was written with another audit key`;
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
