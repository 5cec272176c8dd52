import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, listAudit } from '../core/audit/audit-log.js';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import type { AuditKey } from '../core/audit/audit-key.js';
import { loadConfig } from '../core/config.js';
import { openDatabase, queryRows, sql, type Database, type Db } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { withTransaction } from '../core/db/transaction.js';

afterAll(killRunningClis);

/** Opens the data folder, runs `work`, closes it again: the folder belongs to one process at a time, the CLI's included. */
async function withDataFolder<T>(dataDir: string, auditKey: AuditKey | undefined, work: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase({ dataDir, auditKey });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/** Past the append-only trigger, as the embedded folder's only role (a superuser) can: no audit key needed for that. */
async function asAttacker(dataDir: string, change: (db: Db) => Promise<void>): Promise<void> {
  await withDataFolder(dataDir, undefined, ({ db }) =>
    withTransaction(db, async (tx) => {
      await tx.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
      await change(tx);
      await tx.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
    }),
  );
}

/**
 * `clinagent audit verify` on an embedded data folder with the default key file beside it, after someone with
 * the folder but not the key edited the trail and recomputed its hashes with the database's own function
 * (issue 21), and after the newest entries were deleted, which only an anchor taken earlier shows.
 */
describe('clinagent audit verify', () => {
  let workDir: string;
  let dataDir: string;
  let tamperedId: number;
  let anchorFile: string;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-'));
    dataDir = path.join(workDir, 'data');
    anchorFile = path.join(workDir, 'anchors.json');
    // The key the server would create at first start, where the CLI looks for it.
    const { key } = await loadAuditKey(loadConfig({ DATA_DIR: dataDir }).audit, { createIfMissing: true });
    await withDataFolder(dataDir, key, async (database) => {
      await runMigrations(database);
      const { db } = database;
      for (const projectId of ['trial-ok', 'trial-bad']) {
        for (let n = 1; n <= 3; n++) await appendAudit(db, { projectId, entityType: 'record', entityId: `S00${n}`, action: 'update', actor: 'crc', newValue: { sbp: 120 + n } });
      }
      tamperedId = (await listAudit(db, 'trial-bad'))[1]!.id;
    });
    await asAttacker(dataDir, async (db) => {
      await db.execute(sql`UPDATE audit_log SET new_value = '{"sbp": 121}'::jsonb WHERE id = ${tamperedId}`);
      let [{ previous }] = (await queryRows<{ previous: string }>(db, sql`SELECT prev_hash AS previous FROM audit_log WHERE id = ${tamperedId}`)) as [{ previous: string }];
      for (const { id } of await queryRows<{ id: string }>(db, sql`SELECT id FROM audit_log WHERE project_id = 'trial-bad' AND id >= ${tamperedId} ORDER BY id`)) {
        const [row] = await queryRows<{ hash: string }>(
          db,
          sql`UPDATE audit_log SET prev_hash = ${previous}, hash = audit_log_entry_hash(${previous}, id, project_id, entity_type, entity_id, action, actor, at, old_value, new_value, reason)
              WHERE id = ${id} RETURNING hash`,
        );
        previous = row!.hash;
      }
    });
  });

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('checks every chain, prints each head, and exits 1 naming the entry rewritten with recomputed hashes', async () => {
    const { code, stdout, stderr } = await runCli(['audit', 'verify'], { DATA_DIR: dataDir });

    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
    expect(stdout).toContain(`trial-bad: BROKEN at entry ${tamperedId} of 3: entry ${tamperedId} does not match its hash`);
    expect(stdout).toMatch(/^trial-ok: ok, 3 entries, head entry \d+ hash [0-9a-f]{64}$/m);
  });

  it('exports the heads to an anchor file, and later names the newest entries deleted since', async () => {
    const exported = await runCli(['audit', 'verify', 'trial-ok', '--export', anchorFile], { DATA_DIR: dataDir });
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: '' });
    expect(exported.stdout).toContain(`Anchored 1 chain in ${anchorFile}: keep it outside this server`);
    const anchors = JSON.parse(await readFile(anchorFile, 'utf8')) as { format: string; chains: Array<{ projectId: string; entries: number; headId: number; headHash: string }> };
    const head = anchors.chains[0]!;
    expect(anchors.format).toBe('clinagent-audit-anchors/1');
    expect(head).toMatchObject({ projectId: 'trial-ok', entries: 3 });
    expect(exported.stdout).toContain(`trial-ok: ok, 3 entries, head entry ${head.headId} hash ${head.headHash}`);

    const unchanged = await runCli(['audit', 'verify', 'trial-ok', '--anchor', anchorFile], { DATA_DIR: dataDir });
    expect(unchanged.code).toBe(0);
    expect(unchanged.stdout).toContain(`trial-ok: anchor ok (${anchorFile}): the 3 entries up to entry ${head.headId} are as anchored`);

    await asAttacker(dataDir, async (db) => {
      await db.execute(sql`DELETE FROM audit_log WHERE id = ${head.headId}`);
    });

    const { code, stdout, stderr } = await runCli(['audit', 'verify', '--anchor', anchorFile], { DATA_DIR: dataDir });
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
    // The shortened chain is valid in itself: only the anchor shows the entry is gone.
    expect(stdout).toMatch(/^trial-ok: ok, 2 entries, head entry \d+ hash [0-9a-f]{64}$/m);
    expect(stdout).toContain(`trial-ok: ANCHOR BROKEN (${anchorFile}): entry ${head.headId}, the newest of the 3 entries anchored at`);
    expect(stdout).toContain('is no longer in the trail: entries were deleted after the anchor');
  });

  it('exits 1 saying what to do for a project without entries, a missing subcommand, an unknown option and a file that is no anchor file', async () => {
    const unknown = await runCli(['audit', 'verify', 'trial-typo'], { DATA_DIR: dataDir });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain('trial-typo: no audit entries. Check the project id');

    const bare = await runCli(['audit'], { DATA_DIR: dataDir });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('clinagent audit: VALIDATION_FAILED: No audit subcommand given. Usage: clinagent audit verify [projectId] [--anchor FILE]... [--export FILE]');

    const option = await runCli(['audit', 'verify', '--anchors', anchorFile], { DATA_DIR: dataDir });
    expect(option.code).toBe(1);
    expect(option.stderr).toMatch(/^clinagent audit: VALIDATION_FAILED: Unknown option '--anchors'.*Usage: clinagent audit verify/);

    const notAnchors = path.join(workDir, 'not-anchors.json');
    await writeFile(notAnchors, JSON.stringify({ chains: [{ projectId: 'trial-ok', headId: 'x' }] }));
    const invalid = await runCli(['audit', 'verify', '--anchor', notAnchors], { DATA_DIR: dataDir });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(`clinagent audit: VALIDATION_FAILED: The anchor file ${notAnchors} is not an audit anchor file: format: `);
    expect(invalid.stderr).toContain('chains.0.headId: ');
  });

  it('refuses to verify without the key the trail was written with, and creates none', async () => {
    const elsewhere = path.join(workDir, 'copied-data');
    const { code, stderr } = await runCli(['audit', 'verify'], { DATA_DIR: elsewhere });

    expect(code).toBe(1);
    expect(stderr).toContain(`clinagent audit: CONFIG_MISSING: No audit key: AUDIT_KEY is not set and ${elsewhere}.audit-key does not exist.`);
    await expect(readFile(`${elsewhere}.audit-key`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
