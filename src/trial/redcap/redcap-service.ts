import { assertProjectReader, assertProjectRole } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Config } from '../../core/config.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { createGuardedFetch } from '../../core/net/guarded-fetch.js';
import type { SecretRegistry } from '../../core/secrets.js';
import type { TrialStore } from '../store/trial-store.js';
import { createRedcapClient } from './client.js';
import { importFromRedcap } from './import-from-redcap.js';
import { defaultTokenEnv, getRedcapSettings, setRedcapSettings, storedSettingsProblem } from './project-redcap.js';

interface RedcapServiceDeps {
  db: Db;
  store: TrialStore;
  users: MembershipCheck;
  /** The token read by name at sync time is added here, so it is masked in every log line and trace. */
  secrets: SecretRegistry;
  config: Config['redcap'];
}

/**
 * A project's REDCap API: its binding (URL and the name of the server variable holding the token) and the sync that
 * pulls dictionary, arms, events and records through it. Settings that reach outside ClinAgent are the PI's or an
 * admin's to use and an admin's to bind; checked here, not only in a route, so every caller gets the same answer.
 */
export function createRedcapService(deps: RedcapServiceDeps) {
  const { db, users } = deps;
  // One connection pool for every REDCap sync of this process; each host's resolved address is checked at connect
  // time, as a public name may resolve inside later.
  const redcapFetch = createGuardedFetch({ allowedHosts: deps.config.allowedHosts, what: 'a REDCap host', setting: 'REDCAP_ALLOWED_HOSTS', code: 'EREDCAPHOSTREFUSED' });

  /** A coordinator imports files instead: the API and its token are the PI's or an admin's. */
  async function assertPiOrAdmin(projectId: string, user: User, what: string): Promise<void> {
    const role = await assertProjectRole(users, user, projectId);
    if (role !== 'admin' && role !== 'pi') {
      throw new ClinAgentError('FORBIDDEN', `Only the project's PI or an admin may ${what}; your role in project "${projectId}" is "${role}". Ask the PI of project "${projectId}", or upload a REDCap CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { role, needs: ['pi', 'admin'] });
    }
  }

  return {
    /** The project's REDCap API settings, and whether the bound token variable is set on this server (never its value). */
    settings: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      const settings = await getRedcapSettings(db, projectId);
      if (!settings) return { projectId, configured: false, apiUrl: null, tokenEnv: null, tokenSet: false, updatedBy: null, updatedAt: null };
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /**
     * Binds the project to its REDCap API: the URL and the NAME of the server variable holding its token (default
     * REDCAP_TOKEN_<PROJECT>). Admin only: the binding decides which server secret is sent to which address, so
     * no project member may choose either (a PI pointing another trial's variable at their own listener).
     */
    configure: async (actor: User, projectId: string, input: { apiUrl?: unknown; tokenEnv?: unknown }) => {
      await assertProjectReader(users, actor, projectId);
      if (actor.role !== 'admin') {
        throw new ClinAgentError('FORBIDDEN', `Only an admin binds a project to its REDCap API, since the binding decides which server secret is sent to which address; your role is "${actor.role}". Ask an admin to set the token on the server as ${defaultTokenEnv(projectId)} and bind it (PUT /api/iit/projects/${projectId}/redcap), or upload a REDCap CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { role: actor.role, needs: ['admin'] });
      }
      const settings = await setRedcapSettings(db, projectId, input, actor.name, deps.config);
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /** Pulls dictionary, arms, events and records from this project's REDCap API (PI or admin). */
    sync: async (actor: User, projectId: string) => {
      await assertPiOrAdmin(projectId, actor, 'sync from REDCap');
      const settings = await getRedcapSettings(db, projectId);
      if (!settings) {
        throw new ClinAgentError('CONFIG_MISSING', `Project "${projectId}" has no REDCap API bound. The server's administrator sets the project's API token as the environment variable ${defaultTokenEnv(projectId)} and binds it with PUT /api/iit/projects/${projectId}/redcap {"apiUrl": "https://redcap.example.org/api/"} (admin). Sites without API access can upload a CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { missing: ['apiUrl', 'tokenEnv'] });
      }
      const stale = storedSettingsProblem(settings, deps.config);
      if (stale) {
        throw new ClinAgentError('CONFIG_MISSING', `The REDCap binding of project "${projectId}" cannot be used: ${stale}. An admin binds it again (PUT /api/iit/projects/${projectId}/redcap) with an https URL and a variable starting with REDCAP_TOKEN_, e.g. ${defaultTokenEnv(projectId)}.`, { missing: ['apiUrl', 'tokenEnv'] });
      }
      const token = process.env[settings.tokenEnv]?.trim();
      if (!token) {
        throw new ClinAgentError('CONFIG_MISSING', `The environment variable ${settings.tokenEnv}, which holds the REDCap API token of project "${projectId}", is not set on the server. Set ${settings.tokenEnv} to the project's API token (REDCap > Applications > API) and restart the server.`, { missing: [settings.tokenEnv] });
      }
      // Masked in every log line and trace from now on, wherever an upstream error might echo it.
      deps.secrets.add(token);
      const client = createRedcapClient({
        url: settings.apiUrl,
        token,
        settingNames: { url: `the apiUrl of project "${projectId}"`, token: settings.tokenEnv },
        fetch: redcapFetch,
      });
      return importFromRedcap(deps.store, projectId, client, actor.name);
    },
  };
}

export type RedcapService = ReturnType<typeof createRedcapService>;
