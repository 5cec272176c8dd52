import type { AppContext } from '../context.js';
import { ClinAgentError } from '../core/errors.js';
import type { User } from '../core/auth/users.js';
import { getQcProgress, listQcRuns, listTaskRuns, startQcRun } from './qc/qc-runs.js';
import { newWorkerId, nextCronRun, reviewTaskRun } from './qc/workers.js';
import { listQueries, transitionQuery, type QueryFilter } from './queries.js';
import { buildViolationsReport } from './report/violations-report.js';
import { reportToCsv, reportToXlsx } from './report/export.js';
import { createWebhookNotifier } from './sop/notify.js';
import type { SopDeps } from './sop/engine.js';
import { getTaskRun } from './sop/task-runs.js';
import type { QueryStatus, ReviewRequest } from '../core/db/schema/trial.js';
import { queueReviewNotice } from './qc/review-notices.js';
import { importRedcapCsv, type RedcapCsvFiles } from './import/import-redcap-csv.js';
import { createTrialStore } from './store/trial-store.js';
import { createRedcapClient } from './redcap/client.js';
import { importFromRedcap } from './redcap/import-from-redcap.js';
import { getRedcapSettings, setRedcapSettings } from './redcap/project-redcap.js';
import type { AuditEntityType } from './store/types.js';
import { setIdentifierAccess } from '../core/auth/identifier-access.js';
import { identifierMask } from './identifiers.js';
import { verifyAuditChain } from '../core/audit/verify-audit-chain.js';

/**
 * The trial quality-control area, built over the shared context: one function per thing a coordinator
 * does. HTTP routes and the CLI call these and nothing deeper.
 */
export function createTrialQc(ctx: AppContext, workerId = newWorkerId()) {
  const sop: SopDeps = {
    db: ctx.db,
    llm: ctx.llm,
    tools: ctx.tools,
    trace: ctx.trace,
    logger: ctx.logger,
    notifier: createWebhookNotifier(ctx.config.qc.reviewWebhookUrl, { publicUrl: `http://${ctx.config.host}:${ctx.config.port}` }),
    queueReviewNotice: ctx.jobs ? queueReviewNotice(ctx.jobs) : undefined,
    workerId,
    leaseMs: ctx.config.qc.leaseMs,
    skill: (id) => ctx.skills.get(id),
  };
  const jobs = () => {
    if (!ctx.jobs) throw new ClinAgentError('CONFLICT_STATE', 'This process runs no job queue; start QC from the server (clinagent serve).');
    return ctx.jobs;
  };

  /** Trial data is per project: a user outside the project sees nothing of it, not even that it exists. */
  async function assertMember(projectId: string, user: User): Promise<void> {
    if (!(await ctx.users.isMember(projectId, user))) {
      throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Ask a trial admin to add you.`, { projectId });
    }
  }

  /**
   * Project settings that reach outside ClinAgent (the REDCap API and its token) are the PI's or an admin's
   * to change and use; a coordinator imports files instead. Checked here, not only in a route, so every
   * caller (HTTP, CLI, a future tool) gets the same answer.
   */
  async function assertPiOrAdmin(projectId: string, user: User, what: string): Promise<void> {
    await assertMember(projectId, user);
    if (user.role !== 'admin' && user.role !== 'pi') {
      throw new ClinAgentError('FORBIDDEN', `Only the project's PI or an admin may ${what}; your role is "${user.role}". Ask the PI of project "${projectId}", or upload a REDCap CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { role: user.role, needs: ['pi', 'admin'] });
    }
  }

  const store = createTrialStore(ctx.db);

  /** The violations report as `user` may see it: identifier values masked unless they may see them. */
  async function maskedReport(projectId: string, user: User | undefined) {
    const [report, mask] = await Promise.all([buildViolationsReport(ctx.db, projectId), identifierMask(ctx.db, projectId, user)]);
    return { ...report, rows: report.rows.map(mask.reportRow) };
  }

  /**
   * A suspended run carries what its reviewer is asked to check: the review request saved when it suspended
   * (runs suspended before review requests were saved fall back to the human_review node's description).
   */
  function withReviewDescription<T extends { skillId: string; currentNode: string; status: string; reviewRequest: ReviewRequest | null }>(run: T): T & { reviewDescription: string | null } {
    if (run.status !== 'SUSPENDED') return { ...run, reviewDescription: null };
    if (run.reviewRequest) return { ...run, reviewDescription: run.reviewRequest.description };
    const skill = ctx.skills.list().find((s) => s.id === run.skillId);
    const node = skill?.nodes[run.currentNode];
    return { ...run, reviewDescription: node?.type === 'human_review' ? node.description : null };
  }

  return {
    sop,
    store,
    assertMember,
    /** Projects the user can see, with how many subjects and record rows each holds. */
    projects: async (user: User) =>
      Promise.all((await ctx.users.listProjects(user)).map(async (p) => ({ ...p, ...(await store.countRecords(p.id)), sites: await store.listSites(p.id) }))),
    /** Files may be text or uploaded bytes (decoded from UTF-8 or GBK/GB18030, or refused). */
    importCsv: async (projectId: string, files: RedcapCsvFiles, actor: string) => {
      const isMissing = (file: RedcapCsvFiles['dictionaryCsv'] | undefined) => file === undefined || file.length === 0;
      if (isMissing(files.dictionaryCsv) || isMissing(files.recordsCsv)) {
        throw new ClinAgentError('VALIDATION_FAILED', 'Send the REDCap data dictionary CSV as "dictionary" and the records export CSV as "records" (and optionally the events CSV as "events" and the arms CSV as "arms").', { field: 'files' });
      }
      return importRedcapCsv(store, projectId, files, actor);
    },
    /** The project's REDCap API settings, and whether the named token variable is set on this server (never its value). */
    redcapSettings: async (projectId: string, user: User) => {
      await assertMember(projectId, user);
      const settings = await getRedcapSettings(ctx.db, projectId);
      if (!settings) return { projectId, configured: false, apiUrl: null, tokenEnv: null, tokenSet: false, updatedBy: null, updatedAt: null };
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /** Sets the project's REDCap API URL and the NAME of the environment variable holding its token (PI or admin). */
    configureRedcap: async (projectId: string, input: { apiUrl?: unknown; tokenEnv?: unknown }, user: User) => {
      await assertPiOrAdmin(projectId, user, 'configure the REDCap API');
      const settings = await setRedcapSettings(ctx.db, projectId, input, user.name);
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /** Pulls dictionary, arms, events and records from this project's REDCap API (PI or admin). */
    syncRedcap: async (projectId: string, user: User) => {
      await assertPiOrAdmin(projectId, user, 'sync from REDCap');
      const settings = await getRedcapSettings(ctx.db, projectId);
      if (!settings) {
        throw new ClinAgentError('CONFIG_MISSING', `Project "${projectId}" has no REDCap API configured. A PI or admin sets it with PUT /api/iit/projects/${projectId}/redcap {"apiUrl": "https://redcap.example.org/api/", "tokenEnv": "REDCAP_TOKEN_..."}, and the server's operator sets that environment variable to the project's API token. Sites without API access can upload a CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { missing: ['apiUrl', 'tokenEnv'] });
      }
      const token = process.env[settings.tokenEnv]?.trim();
      if (!token) {
        throw new ClinAgentError('CONFIG_MISSING', `The environment variable ${settings.tokenEnv}, which holds the REDCap API token of project "${projectId}", is not set on the server. Set ${settings.tokenEnv} to the project's API token (REDCap > Applications > API) and restart the server.`, { missing: [settings.tokenEnv] });
      }
      // Masked in every log line and trace from now on, wherever an upstream error might echo it.
      ctx.secrets.add(token);
      const client = createRedcapClient({ url: settings.apiUrl, token, settingNames: { url: `the apiUrl of project "${projectId}"`, token: settings.tokenEnv } });
      return importFromRedcap(store, projectId, client, user.name);
    },
    // Record values, query values, the report and record audit entries show identifier fields only to users
    // allowed to see them (trial/identifiers.ts); everyone else gets them masked. Without a user: masked.
    records: async (projectId: string, page: { site?: string; limit?: number; offset?: number }, user: User) => {
      const mask = await identifierMask(ctx.db, projectId, user);
      return (await store.listRecords(projectId, page)).map(mask.record);
    },
    record: async (projectId: string, recordId: string, user: User) => {
      const events = await store.getRecord(projectId, recordId);
      if (!events.length) throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}".`, { recordId });
      const mask = await identifierMask(ctx.db, projectId, user);
      return {
        recordId,
        events: events.map(mask.record),
        queries: (await listQueries(ctx.db, { projectId, recordId })).map(mask.query),
        audit: (await store.listAudit(projectId, { entityType: 'record', entityId: recordId })).map(mask.auditEntry),
      };
    },
    audit: async (projectId: string, filter: { entityType?: AuditEntityType; entityId?: string }, user?: User) => {
      const mask = await identifierMask(ctx.db, projectId, user);
      return (await store.listAudit(projectId, filter)).map(mask.auditEntry);
    },
    /**
     * Recomputes the project's audit hash chain. The head hash stays out of this answer: it is a hash over the
     * newest entry, whose masked identifier values a reader could otherwise guess against it (`clinagent audit verify` prints it).
     */
    verifyAudit: async (projectId: string) => {
      const { headHash: _headHash, ...verification } = await verifyAuditChain(ctx.db, projectId);
      return verification;
    },
    /** Admin: lets a member of the project see identifier fields unmasked, or takes it back (audited). */
    setIdentifierAccess: async (projectId: string, userId: string, canViewIdentifiers: unknown, actor: User) => {
      if (actor.role !== 'admin') {
        throw new ClinAgentError('FORBIDDEN', `Only admins may grant access to identifier fields; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
      }
      return setIdentifierAccess(ctx.db, { projectId, userId, canViewIdentifiers, actor: actor.name });
    },
    skills: () => ctx.skills.list().map((s) => ({ id: s.id, name: s.name, description: s.description, projects: s.projects ?? null, schedule: s.schedule ?? null, nextRun: s.schedule ? nextCronRun(s.schedule) : null, nodes: Object.keys(s.nodes).length })),
    startQcRun: (projectId: string, skillId: string, recordIds: string[] | undefined, actor: string) =>
      startQcRun({ db: ctx.db, jobs: jobs() }, { projectId, skill: ctx.skills.get(skillId), recordIds, actor }),
    qcRun: async (qcRunId: string) => {
      const progress = await getQcProgress(ctx.db, qcRunId);
      if (!progress) throw new ClinAgentError('NOT_FOUND', `QC run "${qcRunId}" does not exist. Check the id.`, { qcRunId });
      return progress;
    },
    qcRuns: (projectId: string) => listQcRuns(ctx.db, projectId),
    taskRun: async (taskRunId: string) => {
      const run = await getTaskRun(ctx.db, taskRunId);
      if (!run) throw new ClinAgentError('NOT_FOUND', `Task run "${taskRunId}" does not exist. Check the id.`, { taskRunId });
      return withReviewDescription(run);
    },
    taskRuns: async (projectId: string, filter: { qcRunId?: string; statuses?: string[] }) => (await listTaskRuns(ctx.db, { projectId, ...filter })).map(withReviewDescription),
    review: (taskRunId: string, decision: 'approve' | 'reject', reviewer: string, comment?: string) => reviewTaskRun({ db: ctx.db, jobs: jobs() }, taskRunId, decision, reviewer, comment),
    queries: async (filter: QueryFilter, user: User) => {
      const mask = await identifierMask(ctx.db, filter.projectId, user);
      return (await listQueries(ctx.db, filter)).map(mask.query);
    },
    /** `actor`: the user (whose view of identifiers the returned query follows), or a name for internal callers (then masked). */
    transitionQuery: async (projectId: string, queryId: string, to: QueryStatus, actor: string | User, comment: string) => {
      const user = typeof actor === 'string' ? undefined : actor;
      const query = await transitionQuery(ctx.db, { projectId, queryId, to, actor: typeof actor === 'string' ? actor : actor.name, comment });
      return (await identifierMask(ctx.db, projectId, user)).query(query);
    },
    report: (projectId: string, user?: User) => maskedReport(projectId, user),
    reportCsv: async (projectId: string, user?: User) => reportToCsv(await maskedReport(projectId, user)),
    reportXlsx: async (projectId: string, user?: User) => reportToXlsx(await maskedReport(projectId, user)),
  };
}

export type TrialQc = ReturnType<typeof createTrialQc>;
