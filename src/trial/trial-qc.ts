import type { Config } from '../core/config.js';
import type { Db } from '../core/db/connect.js';
import { createGuardedFetch } from '../core/net/guarded-fetch.js';
import { ClinAgentError } from '../core/errors.js';
import { assertProjectReader, assertProjectRole, assertProjectWriter, assertQueryCloser } from '../core/auth/project-access.js';
import type { MembershipCheck } from '../core/auth/membership.js';
import type { ProjectDirectory } from '../core/auth/projects.js';
import type { User } from '../core/auth/users.js';
import type { Jobs } from '../core/jobs/boss.js';
import type { LlmGateway } from '../core/llm/gateway.js';
import type { Logger } from '../core/logger.js';
import type { SecretRegistry } from '../core/secrets.js';
import type { ToolRegistry } from '../core/tools/registry.js';
import type { TraceStore } from '../core/trace/store.js';
import { skillAppliesTo, type SkillCatalog } from './sop/skill-catalog.js';
import { activeSkillSummaries, listSkillSummaries } from './skills/list-skills.js';
import { getQcProgress, listQcRuns, listTaskRuns, pageTaskRuns, startQcRun, type TaskRunPageRequest } from './qc/qc-runs.js';
import { decideReviews, type ReviewSelection } from './qc/review-decisions.js';
import { runFindings } from './qc/run-findings.js';
import { newWorkerId, reviewTaskRun } from './qc/workers.js';
import { DECIDING_MOVES, listQueries, transitionQuery, transitionsFor, type DataQuery } from './queries.js';
import { pageQueries, type QueryPageRequest } from './queries/query-page.js';
import { bulkCloseQueries, type BulkCloseInput } from './queries/bulk-close.js';
import { buildViolationsReport } from './report/violations-report.js';
import { reportToCsv, reportToXlsx } from './report/export.js';
import { createWebhookNotifier } from './sop/notify.js';
import type { SopDeps } from './sop/engine.js';
import { getTaskRun } from './sop/task-runs.js';
import type { QueryStatus, ReviewRequest } from '../core/db/schema/trial.js';
import { queueReviewNotice } from './qc/review-notices.js';
import { checkRedcapCsv, importRedcapCsv, type RedcapCsvFiles } from './import/import-redcap-csv.js';
import { checkOdm, importOdm, type OdmImportFile } from './import/odm/import-odm.js';
import { previewImport } from './import/preview-import.js';
import { createTrialStore } from './store/trial-store.js';
import { createRedcapClient } from './redcap/client.js';
import { importFromRedcap } from './redcap/import-from-redcap.js';
import { defaultTokenEnv, getRedcapSettings, setRedcapSettings, storedSettingsProblem } from './redcap/project-redcap.js';
import type { AuditEntityType } from './store/types.js';
import { canViewIdentifiers, setIdentifierAccess } from '../core/auth/identifier-access.js';
import { identifierMask, maskAuditEntries } from './identifiers.js';
import { buildRecordCrf } from './record-view/record-crf.js';
import { verifyAuditChain } from '../core/audit/verify-audit-chain.js';
import type { RagStore } from '../rag/index.js';
import { createTrialReadTools } from './assistant/read-tools.js';
import { assertVectorStore, deleteProtocolDocument, ingestProtocolDocument, listProtocolDocuments, type ProtocolDocumentInput } from './assistant/protocol-documents.js';

/** The slice of the application context trial QC works with (the app's context has all of it). */
export interface TrialQcContext {
  config: Pick<Config, 'host' | 'port' | 'qc' | 'redcap'>;
  db: Db;
  jobs?: Jobs;
  llm: LlmGateway;
  tools: ToolRegistry;
  trace: TraceStore;
  logger: Logger;
  users: MembershipCheck & ProjectDirectory;
  secrets: SecretRegistry;
  skills: SkillCatalog;
  /** Each project's protocol documents, searched by the assistant's search_protocol tool. */
  rag: RagStore;
  /** False on a PostgreSQL without pgvector: protocol documents answer VECTOR_STORE_UNAVAILABLE. */
  hasVectorStore: boolean;
}

/**
 * The trial quality-control area, built over the shared context: one function per thing a coordinator
 * does. HTTP routes and the CLI call these and nothing deeper.
 *
 * Every function that reads or writes a project's data takes the acting user first and checks here, not in
 * the caller: reads need membership (a non-member gets NOT_FOUND, as if the project, run or query did not
 * exist), changes a writer role (a viewer gets FORBIDDEN), REDCap settings the PI or an admin.
 */
export function createTrialQc(ctx: TrialQcContext, workerId = newWorkerId()) {
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
    // A run created with a stored skill version keeps it (task_runs.skill_version) when another one is activated.
    skill: (id: string, version?: number) => ctx.skills.get(id, version),
  };
  // One connection pool for every REDCap sync of this process; each host's resolved address is checked at connect
  // time, as a public name may resolve inside later.
  const redcapFetch = createGuardedFetch({ allowedHosts: ctx.config.redcap.allowedHosts, what: 'a REDCap host', setting: 'REDCAP_ALLOWED_HOSTS', code: 'EREDCAPHOSTREFUSED' });
  const jobs = () => {
    if (!ctx.jobs) throw new ClinAgentError('CONFLICT_STATE', 'This process runs no job queue; start QC from the server (clinagent serve).');
    return ctx.jobs;
  };

  /** Trial data is per project: a user outside the project sees nothing of it, not even that it exists. */
  const assertMember = (projectId: string, user: User) => assertProjectReader(ctx.users, user, projectId);
  const assertWriter = (projectId: string, user: User) => assertProjectWriter(ctx.users, user, projectId);
  /**
   * Queries as `actor` sees them wherever they are shown (query list, record page, review queue): identifier values
   * masked, and only the moves their role in the trial may make offered, so no page offers a coordinator "close"
   * that the server then refuses. Checks membership.
   */
  const queryView = async (actor: User, projectId: string) => {
    const role = await assertProjectRole(ctx.users, actor, projectId);
    const mask = await identifierMask(ctx.db, projectId, actor);
    return { mask, query: (query: DataQuery) => transitionsFor(mask.query(query), role) };
  };

  /**
   * Project settings that reach outside ClinAgent (the REDCap API and its token) are the PI's or an admin's
   * to change and use; a coordinator imports files instead. Checked here, not only in a route, so every
   * caller (HTTP, CLI, a future tool) gets the same answer.
   */
  async function assertPiOrAdmin(projectId: string, user: User, what: string): Promise<void> {
    const role = await assertProjectRole(ctx.users, user, projectId);
    if (role !== 'admin' && role !== 'pi') {
      throw new ClinAgentError('FORBIDDEN', `Only the project's PI or an admin may ${what}; your role in project "${projectId}" is "${role}". Ask the PI of project "${projectId}", or upload a REDCap CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { role, needs: ['pi', 'admin'] });
    }
  }

  const store = createTrialStore(ctx.db);
  /** The active skills that run on a project: an import preview names their rules a new dictionary affects. */
  const projectSkills = (projectId: string) => ctx.skills.list().filter((skill) => skillAppliesTo(skill, projectId));

  /** Skills as the API shows them: schedule, next run, size. */
  const listSkills = () => activeSkillSummaries(ctx.skills);

  /** The violations report as `user` may see it: identifier values masked unless they may see them. */
  async function maskedReport(projectId: string, user: User) {
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

  // A QC run or task run of a project the user is not in answers exactly as a missing one.
  async function findQcRun(actor: User, qcRunId: string) {
    const progress = await getQcProgress(ctx.db, qcRunId);
    if (!progress || !(await ctx.users.isMember(progress.projectId, actor))) throw new ClinAgentError('NOT_FOUND', `QC run "${qcRunId}" does not exist. Check the id.`, { qcRunId });
    return progress;
  }

  async function findTaskRun(actor: User, taskRunId: string) {
    const run = await getTaskRun(ctx.db, taskRunId);
    if (!run || !(await ctx.users.isMember(run.projectId, actor))) throw new ClinAgentError('NOT_FOUND', `Task run "${taskRunId}" does not exist. Check the id.`, { taskRunId });
    return run;
  }

  return {
    /** For the job workers, which act for the system (a run someone started, or cron), not for a user. */
    sop,
    /** Projects the user can see, with how many subjects and record rows each holds, and the user's role in each. */
    projects: async (actor: User) =>
      Promise.all(
        (await ctx.users.listProjects(actor)).map(async (p) => ({ ...p, ...(await store.countRecords(p.id)), sites: await store.listSites(p.id), role: (await ctx.users.roleIn(p.id, actor)) ?? actor.role })),
      ),
    /** Files may be text or uploaded bytes (decoded from UTF-8 or GBK/GB18030, or refused). */
    importCsv: async (actor: User, projectId: string, files: RedcapCsvFiles) => {
      await assertWriter(projectId, actor);
      assertCsvFilesSent(files);
      return importRedcapCsv(store, projectId, files, actor.name);
    },
    /** A CDISC ODM 1.3 file (REDCap, OpenClinica, Castor...) with metadata and clinical data; all-or-nothing like the CSV import. */
    importOdm: async (actor: User, projectId: string, file: OdmImportFile) => {
      await assertWriter(projectId, actor);
      assertOdmFileSent(file);
      return importOdm(store, projectId, file, actor.name);
    },
    /** What importCsv would import, and every problem it would refuse, writing nothing; for those who may import. */
    previewCsv: async (actor: User, projectId: string, files: RedcapCsvFiles) => {
      await assertWriter(projectId, actor);
      assertCsvFilesSent(files);
      return previewImport(store, projectId, () => checkRedcapCsv(store, projectId, files), projectSkills(projectId), { mayViewIdentifiers: await canViewIdentifiers(ctx.db, projectId, actor) });
    },
    /** What importOdm would import, and every problem it would refuse, writing nothing. */
    previewOdm: async (actor: User, projectId: string, file: OdmImportFile) => {
      await assertWriter(projectId, actor);
      assertOdmFileSent(file);
      return previewImport(store, projectId, () => checkOdm(file), projectSkills(projectId), { mayViewIdentifiers: await canViewIdentifiers(ctx.db, projectId, actor) });
    },
    /** The project's REDCap API settings, and whether the bound token variable is set on this server (never its value). */
    redcapSettings: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      const settings = await getRedcapSettings(ctx.db, projectId);
      if (!settings) return { projectId, configured: false, apiUrl: null, tokenEnv: null, tokenSet: false, updatedBy: null, updatedAt: null };
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /**
     * Binds the project to its REDCap API: the URL and the NAME of the server variable holding its token (default
     * REDCAP_TOKEN_<PROJECT>). Admin only: the binding decides which server secret is sent to which address, so
     * no project member may choose either (a PI pointing another trial's variable at their own listener).
     */
    configureRedcap: async (actor: User, projectId: string, input: { apiUrl?: unknown; tokenEnv?: unknown }) => {
      await assertMember(projectId, actor);
      if (actor.role !== 'admin') {
        throw new ClinAgentError('FORBIDDEN', `Only an admin binds a project to its REDCap API, since the binding decides which server secret is sent to which address; your role is "${actor.role}". Ask an admin to set the token on the server as ${defaultTokenEnv(projectId)} and bind it (PUT /api/iit/projects/${projectId}/redcap), or upload a REDCap CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { role: actor.role, needs: ['admin'] });
      }
      const settings = await setRedcapSettings(ctx.db, projectId, input, actor.name, ctx.config.redcap);
      return { ...settings, configured: true, tokenSet: Boolean(process.env[settings.tokenEnv]?.trim()) };
    },
    /** Pulls dictionary, arms, events and records from this project's REDCap API (PI or admin). */
    syncRedcap: async (actor: User, projectId: string) => {
      await assertPiOrAdmin(projectId, actor, 'sync from REDCap');
      const settings = await getRedcapSettings(ctx.db, projectId);
      if (!settings) {
        throw new ClinAgentError('CONFIG_MISSING', `Project "${projectId}" has no REDCap API bound. The server's administrator sets the project's API token as the environment variable ${defaultTokenEnv(projectId)} and binds it with PUT /api/iit/projects/${projectId}/redcap {"apiUrl": "https://redcap.example.org/api/"} (admin). Sites without API access can upload a CSV export instead (POST /api/iit/projects/${projectId}/imports).`, { missing: ['apiUrl', 'tokenEnv'] });
      }
      const stale = storedSettingsProblem(settings, ctx.config.redcap);
      if (stale) {
        throw new ClinAgentError('CONFIG_MISSING', `The REDCap binding of project "${projectId}" cannot be used: ${stale}. An admin binds it again (PUT /api/iit/projects/${projectId}/redcap) with an https URL and a variable starting with REDCAP_TOKEN_, e.g. ${defaultTokenEnv(projectId)}.`, { missing: ['apiUrl', 'tokenEnv'] });
      }
      const token = process.env[settings.tokenEnv]?.trim();
      if (!token) {
        throw new ClinAgentError('CONFIG_MISSING', `The environment variable ${settings.tokenEnv}, which holds the REDCap API token of project "${projectId}", is not set on the server. Set ${settings.tokenEnv} to the project's API token (REDCap > Applications > API) and restart the server.`, { missing: [settings.tokenEnv] });
      }
      // Masked in every log line and trace from now on, wherever an upstream error might echo it.
      ctx.secrets.add(token);
      const client = createRedcapClient({
        url: settings.apiUrl,
        token,
        settingNames: { url: `the apiUrl of project "${projectId}"`, token: settings.tokenEnv },
        fetch: redcapFetch,
      });
      return importFromRedcap(store, projectId, client, actor.name);
    },
    // Record values, query values and messages, the report and every audit entry show identifier fields only to
    // users allowed to see them (trial/identifiers.ts); everyone else gets them masked.
    records: async (actor: User, projectId: string, page: { site?: string; limit?: number; offset?: number } = {}) => {
      await assertMember(projectId, actor);
      const mask = await identifierMask(ctx.db, projectId, actor);
      return (await store.listRecords(projectId, page)).map(mask.record);
    },
    record: async (actor: User, projectId: string, recordId: string) => {
      const view = await queryView(actor, projectId);
      const events = await store.getRecord(projectId, recordId);
      if (!events.length) throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}".`, { recordId });
      const { mask } = view;
      const [dictionary, schedule, arms, queries] = await Promise.all([store.getDictionary(projectId), store.getEvents(projectId), store.getArms(projectId), listQueries(ctx.db, { projectId, recordId })]);
      const rows = events.map(mask.record);
      return {
        recordId,
        events: rows,
        queries: queries.map(view.query),
        audit: await maskAuditEntries(ctx.db, mask, await store.listAudit(projectId, { entityType: 'record', entityId: recordId })),
        // The same masked rows and queries as above, shaped as a case report form (trial/record-view).
        crf: buildRecordCrf({ dictionary, schedule, arms, rows, queries }),
      };
    },
    audit: async (actor: User, projectId: string, filter: { entityType?: AuditEntityType; entityId?: string } = {}) => {
      await assertMember(projectId, actor);
      const mask = await identifierMask(ctx.db, projectId, actor);
      return maskAuditEntries(ctx.db, mask, await store.listAudit(projectId, filter));
    },
    /**
     * Recomputes the project's audit hash chain. The head hash stays out of this answer: it is a hash over the
     * newest entry, whose masked identifier values a reader could otherwise guess against it (`clinagent audit verify` prints it).
     */
    verifyAudit: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      const { headHash: _headHash, ...verification } = await verifyAuditChain(ctx.db, projectId);
      return verification;
    },
    /** Admin: lets a member of the project see identifier fields unmasked, or takes it back (audited). */
    setIdentifierAccess: async (actor: User, projectId: string, userId: string, canViewIdentifiers: unknown) => {
      if (actor.role !== 'admin') {
        throw new ClinAgentError('FORBIDDEN', `Only admins may grant access to identifier fields; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
      }
      return setIdentifierAccess(ctx.db, { projectId, userId, canViewIdentifiers, actor: actor.name });
    },
    /** Every skill, for code acting for the system (the assistant picks the skills of its project from these). */
    skills: listSkills,
    /**
     * The skills `actor` may know of: those for every project, and those for a project they are in, naming only
     * their projects. Admins see all. Another trial's skill names and project ids are that trial's business.
     */
    visibleSkills: (actor: User) => listSkillSummaries({ db: ctx.db, users: ctx.users, catalog: ctx.skills }, actor),
    startQcRun: async (actor: User, projectId: string, skillId: string, recordIds?: string[]) => {
      await assertWriter(projectId, actor);
      // A version activated by another process serves this run: checking costs one indexed query (stored-skill-catalog.ts).
      await ctx.skills.refresh();
      return startQcRun({ db: ctx.db, jobs: jobs() }, { projectId, skill: ctx.skills.get(skillId), recordIds, actor: actor.name });
    },
    qcRun: (actor: User, qcRunId: string) => findQcRun(actor, qcRunId),
    qcRuns: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      return listQcRuns(ctx.db, projectId);
    },
    taskRun: async (actor: User, taskRunId: string) => withReviewDescription(await findTaskRun(actor, taskRunId)),
    taskRuns: async (actor: User, projectId: string, filter: { qcRunId?: string; statuses?: string[] } = {}) => {
      await assertMember(projectId, actor);
      return (await listTaskRuns(ctx.db, { projectId, ...filter })).map(withReviewDescription);
    },
    /** One page of task runs with the total; each run carries its findings as `actor` may see them (one request per page of the review queue). */
    taskRunPage: async (actor: User, request: TaskRunPageRequest) => {
      const view = await queryView(actor, request.projectId);
      const page = await pageTaskRuns(ctx.db, request);
      const findings = await runFindings(ctx.db, request.projectId, page.taskRuns.map((run) => run.id));
      return { ...page, taskRuns: page.taskRuns.map((run) => ({ ...withReviewDescription(run), findings: (findings.get(run.id) ?? []).map(view.query) })) };
    },
    /** One decision and comment over a selection of the review queue: whole runs or single findings (qc/review-decisions.ts). */
    decideReviews: async (actor: User, projectId: string, decision: 'approve' | 'reject', comment: string, items: ReviewSelection[]) => {
      await assertWriter(projectId, actor);
      return decideReviews({ db: ctx.db, jobs: jobs() }, { projectId, actor: actor.name, decision, comment, items });
    },
    /** `shownDataHash`: the run's reviewRequest.dataHash as the reviewer saw it (the console sends it). */
    review: async (actor: User, taskRunId: string, decision: 'approve' | 'reject', comment?: string, shownDataHash?: string) => {
      const run = await findTaskRun(actor, taskRunId);
      await assertWriter(run.projectId, actor);
      return reviewTaskRun({ db: ctx.db, jobs: jobs() }, taskRunId, decision, actor.name, comment, shownDataHash);
    },
    /** One page of queries, sorted, with the total and the counts per status. */
    queries: async (actor: User, request: QueryPageRequest) => {
      const view = await queryView(actor, request.projectId);
      const page = await pageQueries(ctx.db, request);
      return { ...page, queries: page.queries.map(view.query) };
    },
    /** Closes the listed (or filtered) queries that may close, with one reason, each audited; reports the rest. */
    bulkCloseQueries: async (actor: User, projectId: string, input: Omit<BulkCloseInput, 'projectId' | 'actor'>) => {
      // Closing is data management's decision (admin, PI, data manager); the site answers queries.
      await assertQueryCloser(ctx.users, actor, projectId, 'close queries');
      return bulkCloseQueries(ctx.db, { ...input, projectId, actor: actor.name });
    },
    /** The returned query follows the actor's view of identifiers. */
    transitionQuery: async (actor: User, projectId: string, queryId: string, to: QueryStatus, comment: string) => {
      // The site answers; closing and reopening are data management's (admin, PI, data manager).
      if (DECIDING_MOVES.includes(to)) await assertQueryCloser(ctx.users, actor, projectId, to === 'closed' ? 'close a query' : 'reopen a query');
      else await assertWriter(projectId, actor);
      const query = await transitionQuery(ctx.db, { projectId, queryId, to, actor: actor.name, comment });
      return (await queryView(actor, projectId)).query(query);
    },
    report: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      return maskedReport(projectId, actor);
    },
    reportCsv: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      return reportToCsv(await maskedReport(projectId, actor));
    },
    reportXlsx: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      return reportToXlsx(await maskedReport(projectId, actor));
    },
    // Protocol documents: membership first, so a non-member learns nothing, not even that pgvector is missing.
    protocolDocuments: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      assertVectorStore(ctx.hasVectorStore, projectId);
      return listProtocolDocuments(ctx.rag, projectId);
    },
    /** Text with its file name, or an uploaded .txt/.md/.pdf; a document of the same file name is replaced. */
    ingestProtocolDocument: async (actor: User, projectId: string, input: ProtocolDocumentInput) => {
      await assertWriter(projectId, actor);
      assertVectorStore(ctx.hasVectorStore, projectId);
      return ingestProtocolDocument(ctx.rag, projectId, input, actor.name);
    },
    deleteProtocolDocument: async (actor: User, projectId: string, documentId: string) => {
      await assertWriter(projectId, actor);
      assertVectorStore(ctx.hasVectorStore, projectId);
      await deleteProtocolDocument(ctx.rag, projectId, documentId, actor.name);
    },
    /** The assistant's read-only tools, bound to this project once the actor is known to be a member. */
    readTools: async (actor: User, projectId: string) => {
      await assertMember(projectId, actor);
      return createTrialReadTools({ db: ctx.db, rag: ctx.rag, hasVectorStore: ctx.hasVectorStore }, { projectId });
    },
  };
}

export type TrialQc = ReturnType<typeof createTrialQc>;

function assertCsvFilesSent(files: RedcapCsvFiles): void {
  const isMissing = (file: RedcapCsvFiles['dictionaryCsv'] | undefined) => file === undefined || file.length === 0;
  if (isMissing(files.dictionaryCsv) || isMissing(files.recordsCsv)) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Send the REDCap data dictionary CSV as "dictionary" and the records export CSV as "records" (and optionally the events CSV as "events" and the arms CSV as "arms"), or instead a CDISC ODM 1.3 XML export with metadata and clinical data as "odm".', { field: 'files' });
  }
}

function assertOdmFileSent(file: OdmImportFile): void {
  if (file.odm.length === 0) {
    throw new ClinAgentError('VALIDATION_FAILED', 'The "odm" file is empty. Send the CDISC ODM 1.3 XML export with metadata and clinical data as "odm" (in REDCap: Data Exports > "CDISC ODM (XML)" with the project metadata).', { field: 'odm' });
  }
}
