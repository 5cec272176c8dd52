import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Where the audit key file is by default (AUDIT_KEY and AUDIT_KEY_FILE unset). Never in the database, and never
 * where a copy of the database goes (docs/audit-trail.md):
 * - embedded database, or DATA_DIR set: beside the data folder, `<DATA_DIR>.audit-key`;
 * - PostgreSQL without DATA_DIR: the server has no data folder, and the working folder is no place for a secret (a
 *   start from a checkout left `.clinagent.audit-key` there, issue 32), so the key goes to the user's configuration
 *   folder, one file per database: `$XDG_CONFIG_HOME/clinagent/audit-keys/<host>_<port>_<database>.audit-key`
 *   (`~/.config/...` without XDG_CONFIG_HOME). Every command with the same DATABASE_URL finds it there.
 * `legacyFile` is where versions before that put the PostgreSQL key: still read if it exists, so an installation that
 * has one keeps verifying, and its start says where to move it.
 */
export function defaultAuditKeyFile(input: { databaseUrl?: string; dataDirSet: boolean; dataDir: string; env: NodeJS.ProcessEnv }): { file: string; legacyFile?: string } {
  const besideDataDir = `${input.dataDir}.audit-key`;
  if (!input.databaseUrl || input.dataDirSet) return { file: besideDataDir };
  const configHome = input.env.XDG_CONFIG_HOME || path.join(input.env.HOME || homedir(), '.config');
  return { file: path.join(configHome, 'clinagent', 'audit-keys', `${databaseSlug(input.databaseUrl)}.audit-key`), legacyFile: besideDataDir };
}

/** host_port_database of a PostgreSQL URL, as a file name: no user, no password, nothing a path could escape with. */
function databaseSlug(databaseUrl: string): string {
  let host = 'localhost';
  let port = '5432';
  let database = 'postgres';
  try {
    const url = new URL(databaseUrl);
    host = url.hostname || host;
    port = url.port || port;
    database = decodeURIComponent(url.pathname.replace(/^\//, '')) || url.username || database;
  } catch {
    // An unparsable URL fails at connect with its own message; the key file name only has to be stable.
  }
  return [host, port, database].map((part) => part.replace(/[^A-Za-z0-9._-]/g, '-')).join('_');
}
