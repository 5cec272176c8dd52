import { createHmac } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database, type Db } from '../db/connect.js';
import { auditLog } from '../db/schema/audit.js';
import { openTestDatabase, TEST_AUDIT_KEY, TEST_AUDIT_SECRET, testEngines } from '../../testing/test-database.js';
import { appendAudit, listAudit, type AuditEntryInput } from './audit-log.js';
import { claimAuditChainKey, readAuditChainKey } from './audit-chain-key.js';
import { auditKeyFromSecret } from './audit-key.js';
import { AUDIT_CHAIN_GENESIS, checkAuditChain, listAuditChains, verifyAuditChain } from './verify-audit-chain.js';
import { withTransaction } from '../db/transaction.js';

const entry = (projectId: string, n: number, extra: Partial<AuditEntryInput> = {}): AuditEntryInput => ({
  projectId,
  entityType: 'record',
  entityId: `S${String(n).padStart(3, '0')}`,
  action: 'update',
  actor: 'crc',
  oldValue: { sbp: 120 + n },
  newValue: { sbp: 130 + n, note: '收缩压 "复测"' },
  reason: `re-measured ${n}`,
  ...extra,
});

async function appendMany(db: Db, projectId: string, count: number): Promise<number[]> {
  for (let n = 1; n <= count; n++) await appendAudit(db, entry(projectId, n));
  return (await listAudit(db, projectId)).map((e) => e.id);
}

/**
 * What an attacker with the database's superuser or table-owner rights can do past the append-only trigger
 * (migration 0003). Tests connect as a superuser on both engines, as PGlite always does.
 */
async function withTriggerOff(db: Db, trigger: 'audit_log_append_only' | 'audit_log_chain', change: SQL): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql.raw(`ALTER TABLE audit_log DISABLE TRIGGER ${trigger}`));
    await tx.execute(change);
    await tx.execute(sql.raw(`ALTER TABLE audit_log ENABLE TRIGGER ${trigger}`));
  });
}

describe.each(testEngines())('the audit hash chain on %s', (engine) => {
  let database: Database & { url?: string };
  let db: Db;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    db = database.db;
  });

  afterAll(async () => {
    await database?.close();
  });

  it('links each entry to the one before it, one chain per project, and verifies an untouched trail', async () => {
    await appendAudit(db, entry('chain-a', 1));
    await appendAudit(db, entry('chain-b', 1));
    await appendAudit(db, entry('chain-a', 2));
    await appendAudit(db, entry('chain-a', 3, { oldValue: undefined, newValue: undefined, reason: undefined }));

    const rows = await db.select().from(auditLog).where(sql`project_id = 'chain-a'`).orderBy(auditLog.id);
    expect(rows.map((r) => r.prevHash)).toEqual([AUDIT_CHAIN_GENESIS, rows[0]!.hash, rows[1]!.hash]);
    expect(new Set(rows.map((r) => r.hash)).size).toBe(3);
    expect(await verifyAuditChain(db, 'chain-a')).toEqual({ projectId: 'chain-a', ok: true, entries: 3, headHash: rows[2]!.hash });
    expect(await checkAuditChain(db, 'chain-a')).toMatchObject({ headId: rows[2]!.id, headHash: rows[2]!.hash });
    expect(await verifyAuditChain(db, 'chain-b')).toMatchObject({ ok: true, entries: 1 });
    expect(await verifyAuditChain(db, 'no-such-project')).toEqual({ projectId: 'no-such-project', ok: true, entries: 0, headHash: null });
    expect(await listAuditChains(db)).toEqual(expect.arrayContaining(['chain-a', 'chain-b']));
    // The hashes stay in the database (see listAudit).
    expect(Object.keys((await listAudit(db, 'chain-a'))[0]!)).not.toContain('hash');
  });

  it('hashes the documented canonical form with HMAC-SHA256 under the audit key, the same on every engine and in every session time zone', async () => {
    // What an independent verifier recomputes: HMAC-SHA256 keyed with the AUDIT_KEY text over the jsonb text of
    // this array, time in UTC to the microsecond.
    const canonical = `["${AUDIT_CHAIN_GENESIS}", 7, "p-1", "record", "S001", "update", "crc", "2026-01-02T03:04:05.123456Z", {"a": [1.50, "肺炎"], "b": {"x": null}}, null, "why \\"now\\""]`;
    const expected = createHmac('sha256', TEST_AUDIT_SECRET).update(canonical, 'utf8').digest('hex');
    const [row] = await withTransaction(db, async (tx) => {
      await tx.execute(sql`SET LOCAL TIME ZONE 'Asia/Shanghai'`);
      return queryRows<{ hash: string }>(
        tx,
        sql`SELECT audit_log_entry_mac(decode(current_setting('clinagent.audit_key_ipad'), 'hex'), decode(current_setting('clinagent.audit_key_opad'), 'hex'),
              ${AUDIT_CHAIN_GENESIS}, 7, 'p-1', 'record', 'S001', 'update', 'crc', '2026-01-02 11:04:05.123456+08'::timestamptz,
              '{"b": {"x": null}, "a": [1.50, "肺炎"]}'::jsonb, NULL, 'why "now"') AS hash`,
      );
    });
    expect(row!.hash).toBe(expected);
    expect(TEST_AUDIT_KEY.mac(canonical)).toBe(expected);

    // An entry the trigger chained, recomputed from its stored columns outside the database.
    await appendAudit(db, entry('canonical', 1));
    const [stored] = await queryRows<{ id: string; prev_hash: string; hash: string; at: string; old_value: string; new_value: string }>(
      db,
      sql`SELECT id, prev_hash, hash, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, old_value::text AS old_value, new_value::text AS new_value
          FROM audit_log WHERE project_id = 'canonical'`,
    );
    const message = `["${stored!.prev_hash}", ${stored!.id}, "canonical", "record", "S001", "update", "crc", "${stored!.at}", ${stored!.old_value}, ${stored!.new_value}, "re-measured 1"]`;
    expect(createHmac('sha256', TEST_AUDIT_SECRET).update(message, 'utf8').digest('hex')).toBe(stored!.hash);
  });

  it('replaces the id, time and hashes a writer supplies, so none can be forged through an insert', async () => {
    await appendAudit(db, entry('forge-insert', 1));
    const [inserted] = await db
      .insert(auditLog)
      .values({ ...entry('forge-insert', 2), id: 9_000_000, at: new Date('2001-01-01T00:00:00Z'), prevHash: 'f'.repeat(64), hash: 'e'.repeat(64) })
      .returning();

    expect(inserted!.id).not.toBe(9_000_000);
    expect(inserted!.at.getUTCFullYear()).toBeGreaterThan(2001);
    expect(inserted!.prevHash).not.toBe('f'.repeat(64));
    expect(inserted!.hash).not.toBe('e'.repeat(64));
    expect(await verifyAuditChain(db, 'forge-insert')).toMatchObject({ ok: true, entries: 2 });
  });

  it('names an entry whose value was changed with the append-only trigger switched off', async () => {
    const ids = await appendMany(db, 'tamper-update', 4);

    await withTriggerOff(db, 'audit_log_append_only', sql`UPDATE audit_log SET new_value = '{"sbp": 200}'::jsonb WHERE id = ${ids[1]!}`);

    const result = await verifyAuditChain(db, 'tamper-update');
    expect(result).toMatchObject({ ok: false, entries: 4, firstBadEntryId: ids[1] });
    expect(result.problem).toBe(`entry ${ids[1]} does not match its hash: its content was changed after it was written, it was written past the chain, or it was written with another audit key`);
  });

  it('names an entry whose hash was recomputed without the key, and, recomputed with it, the entry after it by its link', async () => {
    const ids = await appendMany(db, 'tamper-rehash', 3);

    await withTriggerOff(
      db,
      'audit_log_append_only',
      sql`UPDATE audit_log SET actor = 'someone-else',
            hash = audit_log_entry_hash(prev_hash, id, project_id, entity_type, entity_id, action, 'someone-else', at, old_value, new_value, reason)
          WHERE id = ${ids[0]!}`,
    );
    expect(await verifyAuditChain(db, 'tamper-rehash')).toMatchObject({ ok: false, firstBadEntryId: ids[0], problem: expect.stringContaining(`entry ${ids[0]} does not match its hash`) });

    // Someone holding the key too (this session has it) can re-sign the entry, but not the link stored in the next one.
    await withTriggerOff(
      db,
      'audit_log_append_only',
      sql`UPDATE audit_log SET hash = audit_log_entry_mac(decode(current_setting('clinagent.audit_key_ipad'), 'hex'), decode(current_setting('clinagent.audit_key_opad'), 'hex'),
            prev_hash, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason)
          WHERE id = ${ids[0]!}`,
    );
    expect(await verifyAuditChain(db, 'tamper-rehash')).toMatchObject({ ok: false, firstBadEntryId: ids[1], problem: `entry ${ids[1]} does not link to entry ${ids[0]} before it: an entry between them was deleted, or entry ${ids[0]} was replaced` });
  });

  it('names the entry after a deleted one, and the first entry when the oldest were deleted', async () => {
    const ids = await appendMany(db, 'tamper-delete', 4);

    await withTriggerOff(db, 'audit_log_append_only', sql`DELETE FROM audit_log WHERE id = ${ids[2]!}`);
    expect(await verifyAuditChain(db, 'tamper-delete')).toMatchObject({ ok: false, entries: 3, firstBadEntryId: ids[3], problem: expect.stringContaining(`does not link to entry ${ids[1]}`) });

    await withTriggerOff(db, 'audit_log_append_only', sql`DELETE FROM audit_log WHERE id = ${ids[0]!}`);
    expect(await verifyAuditChain(db, 'tamper-delete')).toMatchObject({ firstBadEntryId: ids[1], problem: `entry ${ids[1]} is the first of the project but links to an earlier entry: the entries before it were deleted` });
  });

  it('names a forged entry inserted with the chain trigger switched off', async () => {
    const ids = await appendMany(db, 'tamper-forge', 2);
    const [{ next }] = (await queryRows<{ next: string }>(db, sql`SELECT nextval('audit_log_id_seq') AS next`)) as [{ next: string }];
    const forgedId = Number(next);

    await withTriggerOff(
      db,
      'audit_log_chain',
      sql`INSERT INTO audit_log (id, project_id, entity_type, entity_id, action, actor, new_value, prev_hash, hash)
          VALUES (${forgedId}, 'tamper-forge', 'record', 'S001', 'update', 'crc', '{"consent": "yes"}'::jsonb, ${'0'.repeat(64)}, ${'a'.repeat(64)})`,
    );

    const result = await verifyAuditChain(db, 'tamper-forge');
    expect(result).toMatchObject({ ok: false, entries: 3, firstBadEntryId: forgedId });
    expect(forgedId).toBeGreaterThan(ids[1]!);
  });

  it('keeps one valid chain when 50 entries of two projects are appended at once', async () => {
    // On PostgreSQL, through a pool of 10 connections: the writers really do race for the chain's head.
    // Each of the pool's connections carries the key, set before the pool hands it out.
    const writer = database.url ? await openDatabase({ databaseUrl: database.url, poolSize: 10, auditKey: TEST_AUDIT_KEY }) : database;
    try {
      await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          withTransaction(writer.db, async (tx) => {
            await appendAudit(tx, entry(n % 5 === 0 ? 'race-b' : 'race-a', n));
            await appendAudit(tx, entry(n % 5 === 0 ? 'race-b' : 'race-a', n, { action: 'second' }));
          }),
        ),
      );
    } finally {
      if (writer !== database) await writer.close();
    }

    expect(await verifyAuditChain(db, 'race-a')).toMatchObject({ ok: true, entries: 80 });
    expect(await verifyAuditChain(db, 'race-b')).toMatchObject({ ok: true, entries: 20 });
    const rows = await db.select({ prevHash: auditLog.prevHash }).from(auditLog).where(sql`project_id = 'race-a'`);
    expect(new Set(rows.map((r) => r.prevHash)).size).toBe(80); // no two entries link to the same one
  });

  it('refuses to verify, and to write, on a session without the audit key, saying which key is missing', async () => {
    await appendAudit(db, entry('no-key', 1));
    const withoutKey = <T>(work: (tx: Db) => Promise<T>) =>
      withTransaction(db, async (tx) => {
        await tx.execute(sql`SELECT set_config('clinagent.audit_key_ipad', '', true), set_config('clinagent.audit_key_id', '', true)`);
        return work(tx);
      });

    await expect(withoutKey((tx) => verifyAuditChain(tx, 'no-key'))).rejects.toMatchObject({ code: 'CONFIG_MISSING', message: expect.stringContaining('carries no audit key') });
    const write = withoutKey((tx) => appendAudit(tx, entry('no-key', 2)));
    await expect(write.catch((error: Error) => String((error.cause as Error | undefined)?.message ?? error.message))).resolves.toMatch(/this session has no audit key/);
    expect(await verifyAuditChain(db, 'no-key')).toMatchObject({ ok: true, entries: 1 });
  });

  it('records which key the trail is chained with, and refuses a process with another one at start, naming both', async () => {
    await claimAuditChainKey(db, TEST_AUDIT_KEY);
    expect(await readAuditChainKey(db)).toMatchObject({ fingerprint: TEST_AUDIT_KEY.fingerprint });

    const other = auditKeyFromSecret('a new key a second host generated 0000000', 'key file /srv/b/.clinagent.audit-key');
    const refused = claimAuditChainKey(db, other);
    await expect(refused).rejects.toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'AUDIT_KEY', recordedFingerprint: TEST_AUDIT_KEY.fingerprint, fingerprint: other.fingerprint } });
    await expect(refused).rejects.toThrow(/set AUDIT_KEY or AUDIT_KEY_FILE to the key the other processes use, or restore the key file from your backup/);
    expect(await readAuditChainKey(db)).toMatchObject({ fingerprint: TEST_AUDIT_KEY.fingerprint });
  });

  it('refuses to write an entry in a REPEATABLE READ transaction, which could not see the entry just committed', async () => {
    const attempt = withTransaction(db, (tx) => appendAudit(tx, entry('isolation', 1)), { isolationLevel: 'repeatable read' });

    await expect(attempt).rejects.toThrow();
    await expect(attempt.catch((error: Error) => String((error.cause as Error | undefined)?.message ?? error.message))).resolves.toMatch(/READ COMMITTED/);
    expect(await verifyAuditChain(db, 'isolation')).toMatchObject({ ok: true, entries: 0 });
  });
});
