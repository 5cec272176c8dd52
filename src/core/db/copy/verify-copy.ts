import { checkAuditChain, listAuditChains } from '../../audit/verify-audit-chain.js';
import { queryRows, sql, type Db } from '../connect.js';
import { countRows } from './copy-plan.js';

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** The audit trail as the source had it: per chain, its entry count and head hash. */
export type AuditHeads = Map<string, { entries: number; headHash: string }>;

export interface AuditCopyCheck {
  ok: boolean;
  entries: number;
  chains: number;
  /** One line per chain that does not verify on the target, or differs from the source's. */
  problems: string[];
}

export async function readAuditHeads(db: Db): Promise<AuditHeads> {
  const rows = await queryRows<{ project_id: string; entries: string | number; head_hash: string }>(
    db,
    sql`SELECT project_id, count(*) AS entries, (array_agg(hash ORDER BY id DESC))[1] AS head_hash FROM audit_log GROUP BY project_id`,
  );
  return new Map(rows.map((r) => [r.project_id, { entries: Number(r.entries), headHash: r.head_hash }]));
}

/** Counts every copied table on the target and pairs it with the source's count from the copy's snapshot. */
export async function compareCounts(target: Db, sourceCounts: ReadonlyMap<string, number>, copied: readonly string[]): Promise<TableCount[]> {
  const targetCounts = await countRows(target, copied);
  return copied.map((table) => ({ table, source: sourceCounts.get(table) ?? 0, target: targetCounts.get(table) ?? 0 }));
}

/**
 * Recomputes every chain on the target with the audit key (the same verification as `clinagent audit verify`) and
 * checks each still has the source's entries and head: a chain that verifies but ends early would pass the first test.
 */
export async function verifyCopiedAudit(target: Db, sourceHeads: AuditHeads): Promise<AuditCopyCheck> {
  const chains = [...new Set([...(await listAuditChains(target)), ...sourceHeads.keys()])].sort();
  const problems: string[] = [];
  let entries = 0;
  for (const chain of chains) {
    const check = await checkAuditChain(target, chain);
    const expected = sourceHeads.get(chain);
    entries += check.entries;
    if (!check.ok) problems.push(`${chain}: broken at entry ${check.firstBadEntryId}: ${check.problem}`);
    else if (!expected) problems.push(`${chain}: ${check.entries} entries on the target that the source does not have`);
    else if (check.entries !== expected.entries || check.headHash !== expected.headHash) {
      problems.push(`${chain}: ${check.entries} entries ending in hash ${check.headHash} on the target, ${expected.entries} ending in ${expected.headHash} on the source`);
    }
  }
  return { ok: problems.length === 0, entries, chains: chains.length, problems };
}
