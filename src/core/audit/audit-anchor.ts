import { z } from 'zod';
import { queryRows, sql, type Db } from '../db/connect.js';
import { AUDIT_KEY_SETTINGS } from './audit-key.js';

/**
 * A chain's head as it was at one moment, kept outside the database. The keyed chain shows any entry changed,
 * forged or deleted before the newest one; deleting the newest entries leaves a shorter chain that is still
 * valid, and only a head recorded earlier shows they are gone (docs/audit-trail.md).
 */
const AuditAnchor = z.object({
  projectId: z.string().min(1),
  entries: z.int().positive(),
  headId: z.int().positive(),
  headHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hexadecimal characters'),
});
type AuditAnchor = z.infer<typeof AuditAnchor>;

const AUDIT_ANCHORS_FORMAT = 'clinagent-audit-anchors/1';

/** The file `clinagent audit verify --export` writes and `--anchor` reads, and what the anchor job posts. */
export const AuditAnchors = z.object({
  format: z.literal(AUDIT_ANCHORS_FORMAT),
  createdAt: z.iso.datetime(),
  /** Which audit key the hashes are under (its fingerprint, not the key). */
  keyFingerprint: z.string().min(1),
  chains: z.array(AuditAnchor),
});
export type AuditAnchors = z.infer<typeof AuditAnchors>;

interface AuditAnchorCheck {
  projectId: string;
  ok: boolean;
  /** What matched, or what no longer does and what that means. */
  message: string;
}

/** Every chain's head now (or only `projectId`'s): one query, whatever the length of the trail. */
export async function anchorAuditChains(db: Db, projectId?: string): Promise<AuditAnchors> {
  const heads = await queryRows<{ project_id: string; entries: string | number; id: string | number; hash: string }>(
    db,
    sql`SELECT DISTINCT ON (project_id) project_id, count(*) OVER (PARTITION BY project_id) AS entries, id, hash
        FROM audit_log ${projectId === undefined ? sql`` : sql`WHERE project_id = ${projectId}`}
        ORDER BY project_id, id DESC`,
  );
  return {
    format: AUDIT_ANCHORS_FORMAT,
    createdAt: new Date().toISOString(),
    keyFingerprint: await sessionKeyFingerprint(db),
    chains: heads.map((head) => ({ projectId: head.project_id, entries: Number(head.entries), headId: Number(head.id), headHash: head.hash })),
  };
}

/**
 * Checks each anchored head against the trail: the entry is still there, with the same hash (which covers every
 * entry before it), and as many entries lead up to it. Run it with verifyAuditChain, which checks the links.
 */
export async function checkAuditAnchors(db: Db, anchors: AuditAnchors): Promise<AuditAnchorCheck[]> {
  const fingerprint = await sessionKeyFingerprint(db);
  const checks: AuditAnchorCheck[] = [];
  for (const anchor of anchors.chains) {
    const anchored = `the newest of the ${anchor.entries} entries anchored at ${anchors.createdAt}`;
    if (anchors.keyFingerprint !== fingerprint) {
      checks.push({ projectId: anchor.projectId, ok: false, message: `the anchor of ${anchors.createdAt} was taken under another audit key (fingerprint ${anchors.keyFingerprint}; this installation's is ${fingerprint}): check it against the installation it came from` });
      continue;
    }
    const [row] = await queryRows<{ entries: string | number; hash: string | null }>(
      db,
      sql`SELECT count(*) AS entries, (SELECT hash FROM audit_log WHERE project_id = ${anchor.projectId} AND id = ${anchor.headId}) AS hash
          FROM audit_log WHERE project_id = ${anchor.projectId} AND id <= ${anchor.headId}`,
    );
    const entries = Number(row?.entries ?? 0);
    if (!row?.hash) {
      checks.push({ projectId: anchor.projectId, ok: false, message: `entry ${anchor.headId}, ${anchored}, is no longer in the trail: entries were deleted after the anchor` });
    } else if (row.hash !== anchor.headHash) {
      checks.push({ projectId: anchor.projectId, ok: false, message: `entry ${anchor.headId}, ${anchored}, no longer has the anchored hash: the trail up to it was rewritten after the anchor` });
    } else if (entries !== anchor.entries) {
      checks.push({ projectId: anchor.projectId, ok: false, message: `${entries} entries lead up to entry ${anchor.headId}, ${anchored}: entries before it were deleted or slipped in after the anchor` });
    } else {
      checks.push({ projectId: anchor.projectId, ok: true, message: `the ${anchor.entries} entries up to entry ${anchor.headId} are as anchored at ${anchors.createdAt}` });
    }
  }
  return checks;
}

async function sessionKeyFingerprint(db: Db): Promise<string> {
  const [row] = await queryRows<{ fingerprint: string | null }>(db, sql`SELECT nullif(current_setting(${AUDIT_KEY_SETTINGS.fingerprint}, true), '') AS fingerprint`);
  return row?.fingerprint ?? 'none';
}
