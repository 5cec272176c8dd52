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
import type { QueryStatus } from '../core/db/schema/trial.js';
import { importRedcapCsv, type RedcapCsvFiles } from './import/import-redcap-csv.js';
import { createTrialStore } from './store/trial-store.js';
import { createRedcapClient } from './redcap/client.js';
import { importFromRedcap } from './redcap/import-from-redcap.js';
import type { AuditEntityType } from './store/types.js';

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

  const store = createTrialStore(ctx.db);

  /** A suspended run carries what its reviewer is asked to check (the human_review node's description). */
  function withReviewDescription<T extends { skillId: string; currentNode: string; status: string }>(run: T): T & { reviewDescription: string | null } {
    if (run.status !== 'SUSPENDED') return { ...run, reviewDescription: null };
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
    importCsv: async (projectId: string, files: RedcapCsvFiles, actor: string) => {
      if (!files.dictionaryCsv || !files.recordsCsv) {
        throw new ClinAgentError('VALIDATION_FAILED', 'Send the REDCap data dictionary CSV as "dictionary" and the records export CSV as "records" (and optionally the events CSV as "events").', { field: 'files' });
      }
      return importRedcapCsv(store, projectId, files, actor);
    },
    /** Pulls dictionary, events and records from the REDCap API configured for this server. */
    syncRedcap: (projectId: string, actor: string) => {
      const { url, token } = ctx.config.redcap;
      if (!url || !token) {
        throw new ClinAgentError('CONFIG_MISSING', 'REDCap sync needs REDCAP_API_URL (e.g. https://redcap.example.org/api/) and REDCAP_API_TOKEN set on the server. Sites without API access can upload a CSV export instead (POST .../imports).', { missing: [!url && 'REDCAP_API_URL', !token && 'REDCAP_API_TOKEN'].filter(Boolean) });
      }
      return importFromRedcap(store, projectId, createRedcapClient({ url, token }), actor);
    },
    records: (projectId: string, page: { site?: string; limit?: number; offset?: number }) => store.listRecords(projectId, page),
    record: async (projectId: string, recordId: string) => {
      const events = await store.getRecord(projectId, recordId);
      if (!events.length) throw new ClinAgentError('NOT_FOUND', `Record "${recordId}" does not exist in project "${projectId}".`, { recordId });
      return {
        recordId,
        events,
        queries: await listQueries(ctx.db, { projectId, recordId }),
        audit: await store.listAudit(projectId, { entityType: 'record', entityId: recordId }),
      };
    },
    audit: (projectId: string, filter: { entityType?: AuditEntityType; entityId?: string }) => store.listAudit(projectId, filter),
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
    queries: (filter: QueryFilter) => listQueries(ctx.db, filter),
    transitionQuery: (projectId: string, queryId: string, to: QueryStatus, actor: string, comment: string) => transitionQuery(ctx.db, { projectId, queryId, to, actor, comment }),
    report: (projectId: string) => buildViolationsReport(ctx.db, projectId),
    reportCsv: async (projectId: string) => reportToCsv(await buildViolationsReport(ctx.db, projectId)),
    reportXlsx: async (projectId: string) => reportToXlsx(await buildViolationsReport(ctx.db, projectId)),
  };
}

export type TrialQc = ReturnType<typeof createTrialQc>;
