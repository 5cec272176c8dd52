import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_AUDIT_SCOPE } from '../core/audit/audit-log.js';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import { loadConfig } from '../core/config.js';
import { createAuthStores } from '../core/auth/auth-stores.js';
import { openDatabase, type Database } from '../core/db/connect.js';
import { migrateDatabase } from '../core/db/migrate.js';
import { auditLog } from '../core/db/schema/audit.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';

afterAll(killRunningClis);

/**
 * `clinagent token list|revoke` on an embedded database folder, as an operator stops a leaked token when no
 * admin can sign in. The folder belongs to one process at a time, so the test opens it only between commands.
 */
describe('clinagent token', () => {
  let workDir: string;
  let dataDir: string;
  let nurse: { id: string; token: string };

  async function withDatabase<T>(fn: (database: Database) => Promise<T>): Promise<T> {
    // With the key file the CLI (as the server) creates and reads beside the folder.
    const database = await openDatabase({ dataDir, auditKey: (await loadAuditKey(loadConfig({ DATA_DIR: dataDir }).audit, { createIfMissing: true })).key });
    try {
      await migrateDatabase(database);
      return await fn(database);
    } finally {
      await database.close();
    }
  }

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-token-'));
    dataDir = path.join(workDir, 'data');
    nurse = await withDatabase(async ({ db }) => {
      const created = await createAuthStores(db).create({ name: 'nurse-li', role: 'coordinator' });
      return { id: created.user.id, token: created.token };
    });
  });

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it("lists a user's tokens by name with their state and expiry, never the token", async () => {
    const { code, stdout, stderr } = await runCli(['token', 'list', 'nurse-li'], { DATA_DIR: dataDir });

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Tokens of nurse-li \([0-9a-f-]{36}, coordinator\):\n {2}ID +STATE +LABEL +CREATED +LAST USED +EXPIRES\n {2}[0-9a-f-]{36} +active +created with user +\S+ +never +20\d\d-/);
    expect(stdout).not.toContain(nurse.token);
  });

  it('revokes a token at once and records the operator in the audit trail', async () => {
    const tokenId = await withDatabase(async ({ db }) => (await createAuthStores(db).listTokens(nurse.id, { id: 'test', name: 'test', role: 'admin' }))[0]!.id);

    const { code, stdout, stderr } = await runCli(['token', 'revoke', tokenId], { DATA_DIR: dataDir });

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(new RegExp(`^Revoked token ${tokenId} \\(created with user\\); it stopped working at 20`));
    await withDatabase(async ({ db }) => {
      expect(await createAuthStores(db).authenticate(nurse.token)).toMatchObject({ ok: false, reason: 'revoked' });
      const [entry] = await db.select().from(auditLog).where(and(eq(auditLog.projectId, PLATFORM_AUDIT_SCOPE), eq(auditLog.entityId, tokenId), eq(auditLog.action, 'revoked')));
      expect(entry?.actor).toMatch(/^cli:./);
    });
  });

  it('exits 1 naming an unknown user, and with the usage for a bad action', async () => {
    const unknown = await runCli(['token', 'list', 'nobody'], { DATA_DIR: dataDir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^clinagent token: NOT_FOUND: No user has the name or id "nobody"/);

    const bad = await runCli(['token', 'delete', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Unknown token action "delete". Usage: clinagent token list <user name or id> | clinagent token revoke <tokenId>');
  });
});
