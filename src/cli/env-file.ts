import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ClinAgentError } from '../core/errors.js';

/**
 * The settings file every command reads before its configuration: `.env` in the working folder, or the file
 * CLINAGENT_ENV_FILE names (empty: none). So `clinagent audit verify`, `migrate`, `db copy` and `login-link` see the
 * same DATABASE_URL, DATA_DIR and AUDIT_KEY_FILE as `clinagent serve` started from the same folder, without the
 * operator repeating the server's variables. A variable already set in the environment wins over the file (as
 * systemd's EnvironmentFile or a shell export would). Returns the file read, if any.
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | undefined {
  const named = env.CLINAGENT_ENV_FILE;
  if (named === '') return undefined;
  const file = path.resolve(cwd, named ?? '.env');
  if (!existsSync(file)) {
    if (named === undefined) return undefined;
    throw new ClinAgentError('CONFIG_INVALID', `CLINAGENT_ENV_FILE names ${file}, which does not exist. Point it at the server's settings file (e.g. /etc/clinagent/clinagent.env), or unset it to read .env in the working folder.`, { field: 'CLINAGENT_ENV_FILE', path: file });
  }
  let values: NodeJS.Dict<string>;
  try {
    values = parseEnv(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the settings file ${file}: ${(error as Error).message}. Make it readable by this user, or set CLINAGENT_ENV_FILE to another file.`, { field: 'CLINAGENT_ENV_FILE', path: file }, { cause: error });
  }
  for (const [name, value] of Object.entries(values)) {
    if (env[name] === undefined && value !== undefined) env[name] = value;
  }
  return file;
}
