import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { ClinAgentError } from '../errors.js';
import { auditKeyFromSecret, type AuditKey } from './audit-key.js';

interface LoadedAuditKey {
  key: AuditKey;
  /** Set when this call created the default key file: the administrator must back it up. */
  createdFile?: string;
  /** Set when the key came from where older versions kept it on PostgreSQL (the working folder): move it to `moveTo`. */
  legacy?: { file: string; moveTo: string };
}

/**
 * The audit chain's key, from AUDIT_KEY or its key file. The default key file (`<DATA_DIR>.audit-key`; on PostgreSQL
 * without DATA_DIR, one per database in the user's configuration folder: audit-key-location.ts) is created
 * on first start when `createIfMissing`, readable by its owner only. A process that only reads the trail
 * (`clinagent audit verify`) passes false: a new key could not verify entries written with the old one.
 */
export async function loadAuditKey(settings: Config['audit'], options: { createIfMissing: boolean }): Promise<LoadedAuditKey> {
  if (settings.key !== undefined) return { key: auditKeyFromSecret(settings.key, 'AUDIT_KEY') };
  const source = `key file ${settings.keyFile}`;
  const existing = await readKeyFile(settings.keyFile);
  if (existing !== undefined) return { key: auditKeyFromSecret(existing, source) };
  // A PostgreSQL installation started by an older version has its key in the working folder: keep using it (a new
  // key could not verify its trail) and say where it belongs.
  const legacy = settings.legacyKeyFile === undefined ? undefined : await readKeyFile(settings.legacyKeyFile);
  if (legacy !== undefined) return { key: auditKeyFromSecret(legacy, `key file ${settings.legacyKeyFile}`), legacy: { file: settings.legacyKeyFile!, moveTo: settings.keyFile } };
  if (!settings.createKeyFile) {
    throw new ClinAgentError(
      'CONFIG_INVALID',
      `AUDIT_KEY_FILE names ${settings.keyFile}, which does not exist. Fix the path, or create the file with \`openssl rand -hex 32 > ${settings.keyFile} && chmod 600 ${settings.keyFile}\` (only for a database without an audit trail yet: entries already written need the key they were written with).`,
      { field: 'AUDIT_KEY_FILE', path: settings.keyFile },
    );
  }
  if (!options.createIfMissing) {
    throw new ClinAgentError(
      'CONFIG_MISSING',
      `No audit key: AUDIT_KEY is not set and ${settings.keyFile} does not exist. The audit trail can only be verified with the key it was written with: restore that file from your backup, or set AUDIT_KEY or AUDIT_KEY_FILE as the server has them. (An installation upgraded from a version without the key gets one at its next start or \`clinagent migrate\`.)`,
      { field: 'AUDIT_KEY_FILE', path: settings.keyFile },
    );
  }
  await mkdir(path.dirname(settings.keyFile), { recursive: true });
  const secret = randomBytes(32).toString('hex');
  try {
    // 'wx': two processes starting at once must not each write a key; the second reads the first one's.
    await writeFile(settings.keyFile, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw keyFileError(settings.keyFile, error);
    return { key: auditKeyFromSecret((await readKeyFile(settings.keyFile)) ?? '', source) };
  }
  return { key: auditKeyFromSecret(secret, `${source} (created at first start)`), createdFile: settings.keyFile };
}

async function readKeyFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw keyFileError(file, error);
  }
}

function keyFileError(file: string, error: unknown): ClinAgentError {
  return new ClinAgentError(
    'CONFIG_INVALID',
    `Cannot use the audit key file ${file}: ${(error as Error).message}. Make it a file this process can read (and, on first start, its folder writable), or set AUDIT_KEY_FILE to another path.`,
    { field: 'AUDIT_KEY_FILE', path: file },
    { cause: error },
  );
}
