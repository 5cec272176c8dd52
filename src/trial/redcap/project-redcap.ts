import { and, eq, ne } from 'drizzle-orm';
import { appendAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { projectRedcap } from '../../core/db/schema/auth.js';
import { ClinAgentError } from '../../core/errors.js';
import { lockProject } from '../store/project.js';

/**
 * Where a project's REDCap API is and which server environment variable holds its token. The token itself
 * is never stored or returned: a database dump, an API answer or a writer of another project never sees it,
 * and whoever runs the server decides which tokens exist.
 */
export interface RedcapSettings {
  apiUrl: string;
  tokenEnv: string;
}

export interface StoredRedcapSettings extends RedcapSettings {
  projectId: string;
  updatedBy: string;
  updatedAt: string;
}

/** An environment variable name as shells and process managers accept it, e.g. REDCAP_TOKEN_DEMO. */
export const TOKEN_ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
// Variables the server already uses for its own secrets; pointing a project at one would send it to REDCap.
const RESERVED_ENV = new Set(['LLM_API_KEY', 'EMBEDDING_API_KEY', 'CLINAGENT_ADMIN_TOKEN', 'CLINAGENT_TOKEN', 'DATABASE_URL']);

export async function getRedcapSettings(db: Db, projectId: string): Promise<StoredRedcapSettings | undefined> {
  const [row] = await db.select().from(projectRedcap).where(eq(projectRedcap.projectId, projectId));
  return row ? { projectId: row.projectId, apiUrl: row.apiUrl, tokenEnv: row.tokenEnv, updatedBy: row.updatedBy, updatedAt: row.updatedAt.toISOString() } : undefined;
}

/** Checks the settings; every problem is reported at once, each naming the field and a good value. */
export function checkRedcapSettings(input: { apiUrl?: unknown; tokenEnv?: unknown }): RedcapSettings {
  const problems: string[] = [];
  const apiUrl = typeof input.apiUrl === 'string' ? input.apiUrl.trim() : '';
  const tokenEnv = typeof input.tokenEnv === 'string' ? input.tokenEnv.trim() : '';
  let url: URL | undefined;
  try {
    url = new URL(apiUrl);
  } catch {
    url = undefined;
  }
  if (!apiUrl) problems.push('apiUrl: is required; give the REDCap API endpoint, e.g. https://redcap.example.org/api/');
  else if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) problems.push(`apiUrl: ${JSON.stringify(apiUrl)} is not an http(s) URL; give the REDCap API endpoint, e.g. https://redcap.example.org/api/`);
  else if (url.username || url.password || url.search) problems.push('apiUrl: must not carry a user, password or query string; the token is named by tokenEnv and never goes in the URL');
  if (!tokenEnv) problems.push('tokenEnv: is required; give the NAME of the server environment variable that holds the token, e.g. REDCAP_TOKEN_DEMO (not the token itself)');
  // Not echoed: what fails here is often the token itself, pasted into the wrong field.
  else if (!TOKEN_ENV_NAME.test(tokenEnv)) problems.push("tokenEnv: is not an environment variable name (capital letters, digits and _, not starting with a digit), e.g. REDCAP_TOKEN_DEMO; give the variable's name, not the token");
  else if (RESERVED_ENV.has(tokenEnv)) problems.push(`tokenEnv: ${tokenEnv} holds one of the server's own secrets; use a variable of its own, e.g. REDCAP_TOKEN_DEMO`);
  if (problems.length > 0) {
    throw new ClinAgentError('VALIDATION_FAILED', `Invalid REDCap settings:\n- ${problems.join('\n- ')}`, { problems });
  }
  return { apiUrl, tokenEnv };
}

/**
 * Saves the project's settings with an audit entry (entity "settings"). A token variable already used by
 * another project is refused: one project's token must never pull data into another project.
 */
export async function setRedcapSettings(db: Db, projectId: string, input: { apiUrl?: unknown; tokenEnv?: unknown }, actor: string): Promise<StoredRedcapSettings> {
  const settings = checkRedcapSettings(input);
  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockProject(tx, projectId);
    const [taken] = await tx
      .select({ projectId: projectRedcap.projectId })
      .from(projectRedcap)
      .where(and(eq(projectRedcap.tokenEnv, settings.tokenEnv), ne(projectRedcap.projectId, projectId)));
    if (taken) {
      throw new ClinAgentError(
        'CONFLICT_STATE',
        `The variable ${settings.tokenEnv} is already the REDCap token of project "${taken.projectId}". Each project needs its own variable (its own REDCap token), e.g. REDCAP_TOKEN_${projectId.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}; ask the server's operator to set it.`,
        { field: 'tokenEnv' },
      );
    }
    const old = await getRedcapSettings(tx, projectId);
    // Saving the same settings again changes nothing, not even who last saved them.
    if (old && old.apiUrl === settings.apiUrl && old.tokenEnv === settings.tokenEnv) return old;
    const now = new Date();
    await tx
      .insert(projectRedcap)
      .values({ projectId, ...settings, updatedBy: actor, updatedAt: now })
      .onConflictDoUpdate({ target: projectRedcap.projectId, set: { ...settings, updatedBy: actor, updatedAt: now } });
    await appendAudit(tx, {
      projectId,
      entityType: 'settings',
      entityId: 'redcap',
      action: 'redcap.configure',
      actor,
      oldValue: old ? { apiUrl: old.apiUrl, tokenEnv: old.tokenEnv } : null,
      newValue: settings,
    });
    return { projectId, ...settings, updatedBy: actor, updatedAt: now.toISOString() };
  });
}
