import { queryRows, sql, type Db } from '../db/connect.js';
import { ClinAgentError } from '../errors.js';
import type { AuditKey } from './audit-key.js';

interface RecordedAuditKey {
  fingerprint: string;
  recordedAt: string;
}

/** The fingerprint of the key the trail is chained with (table audit_chain_key), or null before the first keyed write. */
export async function readAuditChainKey(db: Db): Promise<RecordedAuditKey | null> {
  const [row] = await queryRows<{ fingerprint: string; recorded_at: Date | string }>(db, sql`SELECT fingerprint, recorded_at FROM audit_chain_key`);
  return row ? { fingerprint: row.fingerprint, recordedAt: new Date(row.recorded_at).toISOString() } : null;
}

/**
 * At start, before anything is written: records this key as the trail's key if none is yet, else checks that it
 * is the same one. The chain trigger refuses a session with another key anyway, but only at its first audited
 * write, in the middle of a request; this says what to do before the server takes any.
 */
export async function claimAuditChainKey(db: Db, key: AuditKey): Promise<void> {
  await db.execute(sql`INSERT INTO audit_chain_key (id, fingerprint) VALUES (true, ${key.fingerprint}) ON CONFLICT (id) DO NOTHING`);
  const recorded = await readAuditChainKey(db);
  if (recorded && recorded.fingerprint !== key.fingerprint) throw auditKeyMismatch(recorded, key);
}

function auditKeyMismatch(recorded: RecordedAuditKey, key: AuditKey): ClinAgentError {
  return new ClinAgentError(
    'CONFIG_INVALID',
    `The audit trail in this database is chained with another audit key (fingerprint ${recorded.fingerprint}, since ${recorded.recordedAt}) than this process has (fingerprint ${key.fingerprint}, from ${key.source}). Every ClinAgent process on one database needs the same key: set AUDIT_KEY or AUDIT_KEY_FILE to the key the other processes use, or restore the key file from your backup. If that key is lost for good, see "If the key is lost" in docs/audit-trail.md.`,
    { field: 'AUDIT_KEY', recordedFingerprint: recorded.fingerprint, fingerprint: key.fingerprint },
  );
}
