import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, sql, type Database, type Db } from '../db/connect.js';
import { runMigrations } from '../db/migrate.js';
import { createThrowawayDatabase, TEST_AUDIT_KEY, testEngines } from '../../testing/test-database.js';
import { auditKeyFromSecret, type AuditKey } from './audit-key.js';
import { appendAudit, listAudit, type AuditEntryInput } from './audit-log.js';
import { anchorAuditChains, checkAuditAnchors } from './audit-anchor.js';
import { verifyAuditChain } from './verify-audit-chain.js';
import { withTransaction } from '../db/transaction.js';

/**
 * Issue 21, as the security reviewer did it: someone with the database (the embedded data folder, or a
 * PostgreSQL superuser) but without ClinAgent's audit key edits the trail past the append-only trigger and
 * recomputes the chain with the functions the database itself offers. The application and the attacker use
 * separate sessions, one at a time: a PGlite data folder belongs to one process, and a session's settings are
 * its own, so the attacker's session never carries the application's key.
 */
interface SharedDatabase {
  /** Opens a new session on the same database; the application passes its key, the attacker passes none. */
  open(auditKey?: AuditKey): Promise<Database>;
  remove(): Promise<void>;
}

async function createSharedDatabase(engine: 'pglite' | 'postgres'): Promise<SharedDatabase> {
  if (engine === 'pglite') {
    const workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-attack-'));
    const dataDir = path.join(workDir, 'data');
    return { open: (auditKey) => openDatabase({ dataDir, auditKey }), remove: () => rm(workDir, { recursive: true, force: true }) };
  }
  const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!);
  return { open: (auditKey) => openDatabase({ databaseUrl: throwaway.url, poolSize: 2, auditKey }), remove: throwaway.drop };
}

async function inSession<T>(shared: SharedDatabase, auditKey: AuditKey | undefined, work: (db: Db) => Promise<T>): Promise<T> {
  const database = await shared.open(auditKey);
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

const entry = (projectId: string, n: number): AuditEntryInput => ({
  projectId,
  entityType: 'record',
  entityId: `S00${n}`,
  action: 'update',
  actor: 'crc-wang',
  oldValue: { sbp: 120 + n },
  newValue: { sbp: 130 + n },
  reason: `re-measured ${n}`,
});

/** The application writes `count` entries and returns their ids. */
async function writeThroughTheApp(shared: SharedDatabase, projectId: string, count: number): Promise<number[]> {
  return inSession(shared, TEST_AUDIT_KEY, async (db) => {
    for (let n = 1; n <= count; n++) await appendAudit(db, entry(projectId, n));
    return (await listAudit(db, projectId)).map((e) => e.id);
  });
}

/**
 * The attacker's edit: switch the append-only trigger off, change one entry, then recompute its hash and every
 * later entry's prev_hash and hash with the database's own hash function, so each link holds again.
 */
async function rewriteAndRechain(db: Db, projectId: string, changedId: number): Promise<void> {
  await withTransaction(db, async (t) => {
    await t.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
    await t.execute(sql`UPDATE audit_log SET new_value = '{"sbp": 200}'::jsonb, reason = 'typo' WHERE id = ${changedId}`);
    let [{ previous }] = (await queryRows<{ previous: string }>(t, sql`SELECT prev_hash AS previous FROM audit_log WHERE id = ${changedId}`)) as [{ previous: string }];
    for (const { id } of await queryRows<{ id: string }>(t, sql`SELECT id FROM audit_log WHERE project_id = ${projectId} AND id >= ${changedId} ORDER BY id`)) {
      const [row] = await queryRows<{ hash: string }>(
        t,
        sql`UPDATE audit_log SET prev_hash = ${previous},
              hash = audit_log_entry_hash(${previous}, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason)
            WHERE id = ${id} RETURNING hash`,
      );
      previous = row!.hash;
    }
    await t.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
  });
}

/** The PostgreSQL error behind drizzle's wrapper. */
async function refusal(attempt: Promise<unknown>): Promise<string> {
  try {
    await attempt;
  } catch (error) {
    return String(((error as { cause?: { message?: string } }).cause ?? (error as Error)).message);
  }
  throw new Error('the database accepted the write');
}

describe.each(testEngines())('the audit chain against someone with the database but not the audit key (%s)', (engine) => {
  let shared: SharedDatabase;

  beforeEach(async () => {
    shared = await createSharedDatabase(engine);
    const database = await shared.open(TEST_AUDIT_KEY);
    try {
      await runMigrations(database);
    } finally {
      await database.close();
    }
  });

  afterEach(async () => {
    await shared?.remove();
  });

  it('names the edited entry after the attacker recomputed every hash with audit_log_entry_hash', async () => {
    const ids = await writeThroughTheApp(shared, 'rewrite', 4);
    expect(await inSession(shared, TEST_AUDIT_KEY, (db) => verifyAuditChain(db, 'rewrite'))).toMatchObject({ ok: true, entries: 4 });

    await inSession(shared, undefined, (db) => rewriteAndRechain(db, 'rewrite', ids[1]!));

    const result = await inSession(shared, TEST_AUDIT_KEY, (db) => verifyAuditChain(db, 'rewrite'));
    expect(result).toMatchObject({ ok: false, entries: 4, firstBadEntryId: ids[1] });
    expect(result.problem).toContain(`entry ${ids[1]} does not match its hash`);
  });

  it('refuses an entry written past ClinAgent, and names one forged under another key', async () => {
    const ids = await writeThroughTheApp(shared, 'forge', 3);

    // The trigger that chains entries is the database's too: replaying the newest entry through it needs the key.
    const withoutKey = await inSession(shared, undefined, (db) =>
      refusal(db.execute(sql`INSERT INTO audit_log (project_id, entity_type, entity_id, action, actor, new_value) VALUES ('forge', 'record', 'S003', 'update', 'crc-wang', '{"sbp": 99}')`)),
    );
    expect(withoutKey).toMatch(/this session has no audit key/);

    // A key of the attacker's own is refused while the trail records ClinAgent's; replacing that record lets the
    // insert through, but the entry is then signed with a key verification does not accept.
    const attackerKey = auditKeyFromSecret('an attacker guessing a key 0123456789abcdef', 'the attacker');
    const forged = await inSession(shared, attackerKey, async (db) => {
      const refused = await refusal(db.execute(sql`INSERT INTO audit_log (project_id, entity_type, entity_id, action, actor, new_value) VALUES ('forge', 'record', 'S003', 'update', 'crc-wang', '{"sbp": 99}')`));
      await db.execute(sql`UPDATE audit_chain_key SET fingerprint = ${attackerKey.fingerprint}`);
      const [row] = await queryRows<{ id: string }>(db, sql`INSERT INTO audit_log (project_id, entity_type, entity_id, action, actor, new_value) VALUES ('forge', 'record', 'S003', 'update', 'crc-wang', '{"sbp": 99}') RETURNING id`);
      return { refused, id: Number(row!.id) };
    });
    expect(forged.refused).toMatch(/is not the key this audit trail is chained with/);

    const result = await inSession(shared, TEST_AUDIT_KEY, (db) => verifyAuditChain(db, 'forge'));
    expect(result).toMatchObject({ ok: false, entries: 4, firstBadEntryId: forged.id });
    expect(forged.id).toBeGreaterThan(ids[2]!);
  });

  it('reports the newest entries deleted after an anchor was taken, which the chain alone cannot show', async () => {
    await writeThroughTheApp(shared, 'truncate', 5);
    await writeThroughTheApp(shared, 'untouched', 2);
    const anchors = await inSession(shared, TEST_AUDIT_KEY, (db) => anchorAuditChains(db));
    expect(anchors.chains).toEqual(expect.arrayContaining([expect.objectContaining({ projectId: 'truncate', entries: 5, headHash: expect.stringMatching(/^[0-9a-f]{64}$/) })]));
    const anchoredHead = anchors.chains.find((chain) => chain.projectId === 'truncate')!.headId;

    await inSession(shared, undefined, (db) =>
      db.transaction(async (tx) => {
        await tx.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
        await tx.execute(sql`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE project_id = 'truncate' ORDER BY id DESC LIMIT 2)`);
        await tx.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
      }),
    );

    const { chain, anchorCheck } = await inSession(shared, TEST_AUDIT_KEY, async (db) => ({ chain: await verifyAuditChain(db, 'truncate'), anchorCheck: await checkAuditAnchors(db, anchors) }));
    // What is left is a valid chain of 3: only the anchor shows that 2 entries are missing.
    expect(chain).toMatchObject({ ok: true, entries: 3 });
    expect(anchorCheck.find((check) => check.projectId === 'untouched')).toMatchObject({ ok: true });
    const truncated = anchorCheck.find((check) => check.projectId === 'truncate');
    expect(truncated).toMatchObject({ ok: false });
    expect(truncated!.message).toContain(`entry ${anchoredHead}, the newest of the 5 entries anchored`);
  });
});
