import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { auditKeyFromSecret } from './audit-key.js';
import { loadAuditKey } from './load-audit-key.js';

describe('loadAuditKey', () => {
  let workDir: string;

  beforeEach(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-key-'));
  });

  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('creates the default key file beside the data folder on first start, readable by its owner only, and reads it after', async () => {
    const config = loadConfig({ DATA_DIR: 'data' }, workDir);
    expect(config.audit.keyFile).toBe(path.join(workDir, 'data.audit-key'));

    const first = await loadAuditKey(config.audit, { createIfMissing: true });
    expect(first.createdFile).toBe(path.join(workDir, 'data.audit-key'));
    expect(await readFile(first.createdFile!, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    if (process.platform !== 'win32') expect((await stat(first.createdFile!)).mode & 0o777).toBe(0o600);

    const again = await loadAuditKey(config.audit, { createIfMissing: true });
    expect(again.createdFile).toBeUndefined();
    expect(again.key.fingerprint).toBe(first.key.fingerprint);
  });

  it('uses AUDIT_KEY as given, and an AUDIT_KEY_FILE without its trailing newline', async () => {
    const secret = 'a-secret-of-at-least-32-characters-0000';
    expect((await loadAuditKey(loadConfig({ AUDIT_KEY: secret }, workDir).audit, { createIfMissing: false })).key.fingerprint).toBe(auditKeyFromSecret(secret, 'x').fingerprint);

    await writeFile(path.join(workDir, 'key'), `${secret}\n`);
    const fromFile = await loadAuditKey(loadConfig({ AUDIT_KEY_FILE: 'key' }, workDir).audit, { createIfMissing: true });
    expect(fromFile.key.fingerprint).toBe(auditKeyFromSecret(secret, 'x').fingerprint);
    expect(fromFile.key.source).toBe(`key file ${path.join(workDir, 'key')}`);
  });

  it('never creates a key for a file the administrator named, nor for a process that only verifies', async () => {
    const named = loadAuditKey(loadConfig({ AUDIT_KEY_FILE: 'missing-key' }, workDir).audit, { createIfMissing: true });
    await expect(named).rejects.toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'AUDIT_KEY_FILE' }, message: expect.stringContaining(`AUDIT_KEY_FILE names ${path.join(workDir, 'missing-key')}, which does not exist`) });

    const verifying = loadAuditKey(loadConfig({ DATA_DIR: 'data' }, workDir).audit, { createIfMissing: false });
    await expect(verifying).rejects.toMatchObject({ code: 'CONFIG_MISSING', message: expect.stringContaining('restore that file from your backup') });
    await expect(stat(path.join(workDir, 'data.audit-key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a key file holding fewer than 32 characters, saying how to make one', async () => {
    await writeFile(path.join(workDir, 'short'), 'too-short\n');

    await expect(loadAuditKey(loadConfig({ AUDIT_KEY_FILE: 'short' }, workDir).audit, { createIfMissing: false })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: `The audit key from key file ${path.join(workDir, 'short')} has 9 characters; it needs at least 32. Generate one with \`openssl rand -hex 32\`.`,
    });
  });
});

describe('AuditKey', () => {
  const secret = 'k'.repeat(100);

  it('shows only its fingerprint when logged, serialised or inspected', () => {
    const key = auditKeyFromSecret(secret, 'AUDIT_KEY');
    for (const shown of [JSON.stringify({ key }), inspect(key), inspect({ nested: { key } }), String(JSON.stringify(key))]) {
      expect(shown).toContain(key.fingerprint);
      expect(shown).not.toContain('kkkk');
      expect(shown).not.toContain(key.sessionSettings().innerPad);
    }
  });

  it('gives the database pads that compute the same HMAC as node:crypto, a key longer than one block included', () => {
    // HMAC(K, m) = sha256((K xor opad) || sha256((K xor ipad) || m)), as the chain trigger computes it in SQL.
    for (const candidate of [secret, 'a-key-shorter-than-one-hmac-block-0000000']) {
      const key = auditKeyFromSecret(candidate, 'AUDIT_KEY');
      const { innerPad, outerPad } = key.sessionSettings();
      const inner = createHash('sha256').update(Buffer.from(innerPad, 'hex')).update('["entry"]', 'utf8').digest();
      const viaPads = createHash('sha256').update(Buffer.from(outerPad, 'hex')).update(inner).digest('hex');
      expect(viaPads).toBe(key.mac('["entry"]'));
    }
  });
});

/** Issue 32: a start on PostgreSQL left `.clinagent.audit-key` in the working folder. */
describe('the default audit key file on PostgreSQL', () => {
  let workDir: string;
  const url = 'postgres://clinagent:secret@db.example.org:6543/trials';

  beforeEach(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-audit-key-pg-'));
  });

  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('is one file per database in the configuration folder, never the working folder; beside DATA_DIR when set', () => {
    const config = loadConfig({ DATABASE_URL: url, XDG_CONFIG_HOME: path.join(workDir, 'config') }, path.join(workDir, 'checkout'));
    expect(config.audit.keyFile).toBe(path.join(workDir, 'config', 'clinagent', 'audit-keys', 'db.example.org_6543_trials.audit-key'));
    expect(config.audit.keyFile).not.toContain('secret');
    expect(loadConfig({ DATABASE_URL: url, HOME: workDir }, '/srv').audit.keyFile).toBe(path.join(workDir, '.config', 'clinagent', 'audit-keys', 'db.example.org_6543_trials.audit-key'));
    expect(loadConfig({ DATABASE_URL: url, DATA_DIR: '/var/lib/clinagent' }, '/srv').audit.keyFile).toBe('/var/lib/clinagent.audit-key');
    expect(loadConfig({}, '/srv').audit.keyFile).toBe('/srv/.clinagent.audit-key');
  });

  it('creates the key there, and keeps using one an older version left in the working folder, saying where to move it', async () => {
    const fresh = await loadAuditKey(loadConfig({ DATABASE_URL: url, XDG_CONFIG_HOME: path.join(workDir, 'config') }, workDir).audit, { createIfMissing: true });
    expect(fresh.createdFile).toBe(path.join(workDir, 'config', 'clinagent', 'audit-keys', 'db.example.org_6543_trials.audit-key'));

    const old = path.join(workDir, 'old-checkout');
    const legacySecret = 'f'.repeat(64);
    await mkdir(old, { recursive: true });
    await writeFile(path.join(old, '.clinagent.audit-key'), `${legacySecret}\n`);
    const settings = loadConfig({ DATABASE_URL: url, XDG_CONFIG_HOME: path.join(workDir, 'other-config') }, old).audit;
    const loaded = await loadAuditKey(settings, { createIfMissing: true });
    expect(loaded.key.fingerprint).toBe(auditKeyFromSecret(legacySecret, 'x').fingerprint);
    expect(loaded.createdFile).toBeUndefined();
    expect(loaded.legacy).toEqual({ file: path.join(old, '.clinagent.audit-key'), moveTo: settings.keyFile });
  });
});
