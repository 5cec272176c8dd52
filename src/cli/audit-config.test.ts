import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '../core/audit/audit-log.js';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import { loadConfig } from '../core/config.js';
import { openDatabase } from '../core/db/connect.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { createThrowawayDatabase } from '../testing/test-database.js';

afterAll(killRunningClis);

/** Writes entries into the trail as the server would, with the key the server uses (read as `serve` reads it). */
async function writeTrail(env: Record<string, string>, cwd: string): Promise<void> {
  const config = loadConfig(env, cwd);
  const { key } = await loadAuditKey(config.audit, { createIfMissing: false });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.databaseUrl ? undefined : config.dataDir, auditKey: key, poolSize: 1 });
  try {
    for (let n = 1; n <= 2; n++) await appendAudit(database.db, { projectId: 'trial-a', entityType: 'record', entityId: `S00${n}`, action: 'update', actor: 'crc', newValue: { sbp: 120 + n } });
  } finally {
    await database.close();
  }
}

/**
 * Issue 32: `clinagent audit verify` needed the server's variables repeated on the command line, and a start on
 * PostgreSQL left `.clinagent.audit-key` in the working folder. Every command now reads the server's settings file
 * (`.env` in the working folder, or CLINAGENT_ENV_FILE), and on PostgreSQL the key lives in the user's configuration
 * folder, one file per database, never the working folder.
 */
describe('clinagent audit verify reads the settings the server reads (embedded database)', () => {
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-env-'));
    await writeFile(path.join(workDir, '.env'), '# the server settings, as `clinagent serve` in this folder reads them\nDATA_DIR=trial-data\n');
    const migrated = await runCli(['migrate'], {}, 60_000, workDir);
    expect(migrated.stderr).toBe('');
    expect(migrated.stdout).toContain(`Created the audit key file ${path.join(workDir, 'trial-data.audit-key')}`);
    await writeTrail({ DATA_DIR: 'trial-data' }, workDir);
  }, 120_000);

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('verifies with no variable repeated, from the folder the server runs in', async () => {
    const { code, stdout, stderr } = await runCli(['audit', 'verify'], {}, 60_000, workDir);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^trial-a: ok, 2 entries/m);
    expect(code).toBe(0);
  });

  it('lets a variable set in the environment win over the file, and names a settings file that does not exist', async () => {
    const other = await runCli(['audit', 'verify'], { DATA_DIR: 'elsewhere' }, 60_000, workDir);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`${path.join(workDir, 'elsewhere.audit-key')} does not exist`);
    const missing = await runCli(['audit', 'verify'], { CLINAGENT_ENV_FILE: '/etc/clinagent/missing.env' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('CLINAGENT_ENV_FILE names /etc/clinagent/missing.env, which does not exist');
  }, 120_000);
});

describe.each(process.env.TEST_DATABASE_URL ? [process.env.TEST_DATABASE_URL] : [])('the audit key of a PostgreSQL server, and audit verify there', (serverUrl) => {
  let workDir: string;
  let configHome: string;
  let target: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-pg-'));
    configHome = await mkdtemp(path.join(tmpdir(), 'clinagent-config-home-'));
    target = await createThrowawayDatabase(serverUrl);
    await writeFile(path.join(workDir, '.env'), `DATABASE_URL=${target.url}\n`);
  }, 60_000);

  afterAll(async () => {
    await target?.drop();
    await rm(workDir, { recursive: true, force: true });
    await rm(configHome, { recursive: true, force: true });
  });

  it('keeps the key out of the working folder, and verifies from there with nothing repeated', async () => {
    // The first start on the database, as `serve` makes it (migrations, then the key claimed for the trail).
    const migrated = await runCli(['migrate'], { XDG_CONFIG_HOME: configHome }, 60_000, workDir);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(await readdir(workDir)).toEqual(['.env']);
    const keys = await readdir(path.join(configHome, 'clinagent', 'audit-keys'));
    expect(keys).toEqual([`${new URL(target.url).hostname}_${new URL(target.url).port || '5432'}_${new URL(target.url).pathname.slice(1)}.audit-key`]);
    expect(migrated.stdout).toContain(`Created the audit key file ${path.join(configHome, 'clinagent', 'audit-keys', keys[0]!)}`);

    await writeTrail({ DATABASE_URL: target.url, XDG_CONFIG_HOME: configHome }, workDir);
    const verified = await runCli(['audit', 'verify'], { XDG_CONFIG_HOME: configHome }, 60_000, workDir);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(/^trial-a: ok, 2 entries/m);
    expect(verified.code).toBe(0);
    expect(existsSync(path.join(workDir, '.clinagent.audit-key'))).toBe(false);
  }, 180_000);
});
