import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, listAudit } from '../core/audit/audit-log.js';
import { openDatabase, sql } from '../core/db/connect.js';
import { runMigrations } from '../core/db/migrate.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';

afterAll(killRunningClis);

/**
 * `clinagent audit verify` on an embedded data folder whose trail was edited past the append-only trigger (as
 * PGlite's only role, a superuser, can). The folder belongs to one process at a time, so the test writes and
 * tampers first, closes it, then runs the CLI.
 */
describe('clinagent audit verify', () => {
  let workDir: string;
  let dataDir: string;
  let tamperedId: number;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-'));
    dataDir = path.join(workDir, 'data');
    const database = await openDatabase({ dataDir });
    try {
      await runMigrations(database);
      for (const projectId of ['trial-ok', 'trial-bad']) {
        for (let n = 1; n <= 3; n++) await appendAudit(database.db, { projectId, entityType: 'record', entityId: `S00${n}`, action: 'update', actor: 'crc', newValue: { sbp: 120 + n } });
      }
      tamperedId = (await listAudit(database.db, 'trial-bad'))[1]!.id;
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
        await tx.execute(sql`UPDATE audit_log SET new_value = '{"sbp": 121}'::jsonb WHERE id = ${tamperedId}`);
        await tx.execute(sql`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
      });
    } finally {
      await database.close();
    }
  });

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('checks every chain, prints one line each and exits 1 naming the altered entry', async () => {
    const { code, stdout, stderr } = await runCli(['audit', 'verify'], { DATA_DIR: dataDir });

    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
    expect(stdout).toMatch(/^trial-bad: BROKEN at entry \d+ of 3: entry \d+ does not match its hash/m);
    expect(stdout).toContain(`BROKEN at entry ${tamperedId} of 3`);
    expect(stdout).toMatch(/^trial-ok: ok, 3 entries, head [0-9a-f]{64}$/m);
  });

  it('checks one project and exits 0 when its chain holds', async () => {
    const { code, stdout } = await runCli(['audit', 'verify', 'trial-ok'], { DATA_DIR: dataDir });

    expect(code).toBe(0);
    expect(stdout).toMatch(/^trial-ok: ok, 3 entries, head [0-9a-f]{64}\n$/);
  });

  it('exits 1 for a project without entries and for a missing subcommand, saying what to do', async () => {
    const unknown = await runCli(['audit', 'verify', 'trial-typo'], { DATA_DIR: dataDir });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain('trial-typo: no audit entries. Check the project id');

    const bare = await runCli(['audit'], { DATA_DIR: dataDir });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('clinagent audit: VALIDATION_FAILED: No audit subcommand given. Usage: clinagent audit verify [projectId]');
  });
});
