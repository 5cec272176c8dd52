import { and, eq, ne } from 'drizzle-orm';
import { appendAudit } from '../../core/audit/audit-log.js';
import type { Db } from '../../core/db/connect.js';
import { projectRedcap } from '../../core/db/schema/auth.js';
import { outboundHostProblem } from '../../core/net/public-address.js';
import { ClinAgentError } from '../../core/errors.js';
import { lockProject } from '../store/project.js';
import { withTransaction } from '../../core/db/transaction.js';

/**
 * Where a project's REDCap API is and which server environment variable holds its token. The token itself
 * is never stored or returned: a database dump, an API answer or a writer of another project never sees it,
 * and whoever runs the server decides which tokens exist.
 */
interface RedcapSettings {
  apiUrl: string;
  tokenEnv: string;
}

interface StoredRedcapSettings extends RedcapSettings {
  projectId: string;
  updatedBy: string;
  updatedAt: string;
}

/**
 * Every REDCap token variable starts with this prefix. With the admin-only binding it is what keeps a project from
 * naming any other server variable (HOME, DATABASE_URL, a secret added later): the server reads no variable for
 * REDCap outside this family, whoever set the binding.
 */
const TOKEN_ENV_PREFIX = 'REDCAP_TOKEN_';
/** An environment variable name of the family, as shells and process managers accept it, e.g. REDCAP_TOKEN_DEMO. */
const TOKEN_ENV_NAME = /^REDCAP_TOKEN_[A-Z0-9_]{1,80}$/;
/** Longer is no REDCap URL anyone types; a megabyte stored here would come back in every settings read. */
const MAX_URL_LENGTH = 2000;

/** The variable a project's token is read from when the admin names none: REDCAP_TOKEN_ and the project id. */
export function defaultTokenEnv(projectId: string): string {
  return `${TOKEN_ENV_PREFIX}${projectId.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 80) || 'PROJECT'}`;
}

interface RedcapPolicy {
  /** The administrator lets the API URL be plain http (REDCAP_ALLOW_HTTP=true); https otherwise. */
  allowHttp: boolean;
  /**
   * REDCAP_ALLOWED_HOSTS: hosts the API URL may name although they are loopback, private or link-local (a
   * hospital's REDCap on its own network). Any other host must be public: the server sends the project's token
   * there, and 169.254.169.254 serves a cloud machine's credentials.
   */
  allowedHosts?: ReadonlyArray<string>;
}

export async function getRedcapSettings(db: Db, projectId: string): Promise<StoredRedcapSettings | undefined> {
  const [row] = await db.select().from(projectRedcap).where(eq(projectRedcap.projectId, projectId));
  return row ? { projectId: row.projectId, apiUrl: row.apiUrl, tokenEnv: row.tokenEnv, updatedBy: row.updatedBy, updatedAt: row.updatedAt.toISOString() } : undefined;
}

/** Checks the settings; every problem is reported at once, each naming the field and a good value. */
function checkRedcapSettings(input: { apiUrl?: unknown; tokenEnv?: unknown }, policy: RedcapPolicy, projectId: string): RedcapSettings {
  const problems: string[] = [];
  const apiUrl = typeof input.apiUrl === 'string' ? input.apiUrl.trim() : '';
  const tokenEnv = typeof input.tokenEnv === 'string' && input.tokenEnv.trim() ? input.tokenEnv.trim() : defaultTokenEnv(projectId);
  if (!apiUrl) problems.push('apiUrl: is required; give the REDCap API endpoint, e.g. https://redcap.example.org/api/');
  else if (apiUrl.length > MAX_URL_LENGTH) problems.push(`apiUrl: is ${apiUrl.length} characters, over the ${MAX_URL_LENGTH}-character limit; give the REDCap API endpoint, e.g. https://redcap.example.org/api/`);
  else problems.push(...urlProblems(apiUrl, policy));
  // Not echoed: what fails here is often the token itself, pasted into the wrong field.
  if (!TOKEN_ENV_NAME.test(tokenEnv)) {
    problems.push(`tokenEnv: must be the NAME of a server environment variable starting with ${TOKEN_ENV_PREFIX} (capital letters, digits and _), e.g. ${defaultTokenEnv(projectId)}; give the variable's name, not the token`);
  }
  if (problems.length > 0) {
    throw new ClinAgentError('VALIDATION_FAILED', `Invalid REDCap settings:\n- ${problems.join('\n- ')}`, { problems });
  }
  return { apiUrl, tokenEnv };
}

/** Why the URL cannot receive a token: not http(s), credentials or a query in it, or plain http not allowed. */
function urlProblems(apiUrl: string, policy: RedcapPolicy): string[] {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return [`apiUrl: ${JSON.stringify(apiUrl.slice(0, 100))} is not an http(s) URL; give the REDCap API endpoint, e.g. https://redcap.example.org/api/`];
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return [`apiUrl: ${JSON.stringify(apiUrl.slice(0, 100))} is not an http(s) URL; give the REDCap API endpoint, e.g. https://redcap.example.org/api/`];
  if (url.username || url.password || url.search) return ['apiUrl: must not carry a user, password or query string; the token is read from the server variable bound to the project and never goes in the URL'];
  const hostProblem = outboundHostProblem(url.hostname, policy.allowedHosts ?? []);
  if (hostProblem) return [`apiUrl: names ${url.hostname}, ${hostProblem}; a REDCap API URL must be a public host unless the server's administrator names it in REDCAP_ALLOWED_HOSTS (a REDCap on this machine or the hospital's network)`];
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return ['apiUrl: must be https, so the project\'s token never travels unencrypted; plain http is allowed only when the server\'s administrator sets REDCAP_ALLOW_HTTP=true (a test REDCap on a closed network)'];
  }
  return [];
}

/**
 * Whether stored settings may still be used to send the token: bindings saved before the prefix rule (a PI could
 * once name any variable) or an http URL the administrator no longer allows are refused until an admin binds again.
 */
export function storedSettingsProblem(settings: RedcapSettings, policy: RedcapPolicy): string | undefined {
  if (!TOKEN_ENV_NAME.test(settings.tokenEnv)) return `its token variable ${settings.tokenEnv} does not start with ${TOKEN_ENV_PREFIX}`;
  const [problem] = urlProblems(settings.apiUrl, policy);
  return problem;
}

/**
 * Saves the project's settings with an audit entry (entity "settings"). A token variable already used by
 * another project is refused: one project's token must never pull data into another project. Only an admin
 * calls this (redcap-service.ts): the binding decides which server secret is sent where.
 */
export async function setRedcapSettings(db: Db, projectId: string, input: { apiUrl?: unknown; tokenEnv?: unknown }, actor: string, policy: RedcapPolicy): Promise<StoredRedcapSettings> {
  const settings = checkRedcapSettings(input, policy, projectId);
  return withTransaction(db, async (tx) => {
    await lockProject(tx, projectId);
    const [taken] = await tx
      .select({ projectId: projectRedcap.projectId })
      .from(projectRedcap)
      .where(and(eq(projectRedcap.tokenEnv, settings.tokenEnv), ne(projectRedcap.projectId, projectId)));
    if (taken) {
      // The other project is not named: its id is not this caller's business.
      throw new ClinAgentError(
        'CONFLICT_STATE',
        `The variable ${settings.tokenEnv} is already bound to another project. Each project needs its own variable (its own REDCap token), e.g. ${defaultTokenEnv(projectId)}; set it on the server and bind that one.`,
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
