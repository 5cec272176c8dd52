import { assertProjectReader, assertProjectWriter } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import type { ReviewRequest } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { createQueryView } from '../queries/query-view.js';
import type { SkillCatalog } from '../sop/skill-catalog.js';
import { getTaskRun } from '../sop/task-runs.js';
import { getQcProgress, listQcRuns, listTaskRuns, pageTaskRuns, startQcRun, type TaskRunPageRequest } from './qc-runs.js';
import { decideReviews, type ReviewSelection } from './review-decisions.js';
import { runFindings } from './run-findings.js';
import { reviewTaskRun } from './workers.js';

interface QcServiceDeps {
  db: Db;
  /** Absent in one-shot CLI commands: starting or reviewing a run then says to use the server. */
  jobs?: Jobs;
  users: MembershipCheck;
  /** Refreshed before a run starts, so a version activated by another process serves it. */
  skills: SkillCatalog;
}

/**
 * QC runs and their review: start a run of a skill, follow its progress, read its task runs with their findings,
 * and approve or reject what a run suspended for. Reads need membership (a run of a project the user is not in
 * answers exactly as a missing one), starting and deciding a writer role.
 */
export function createQcService(deps: QcServiceDeps) {
  const { db, users } = deps;
  const queryView = createQueryView(deps);
  const jobs = () => {
    if (!deps.jobs) throw new ClinAgentError('CONFLICT_STATE', 'This process runs no job queue; start QC from the server (clinagent serve).');
    return deps.jobs;
  };

  /**
   * A suspended run carries what its reviewer is asked to check: the review request saved when it suspended
   * (runs suspended before review requests were saved fall back to the human_review node's description).
   */
  function withReviewDescription<T extends { skillId: string; currentNode: string; status: string; reviewRequest: ReviewRequest | null }>(run: T): T & { reviewDescription: string | null } {
    if (run.status !== 'SUSPENDED') return { ...run, reviewDescription: null };
    if (run.reviewRequest) return { ...run, reviewDescription: run.reviewRequest.description };
    const skill = deps.skills.list().find((s) => s.id === run.skillId);
    const node = skill?.nodes[run.currentNode];
    return { ...run, reviewDescription: node?.type === 'human_review' ? node.description : null };
  }

  async function findQcRun(actor: User, qcRunId: string) {
    const progress = await getQcProgress(db, qcRunId);
    if (!progress || !(await users.isMember(progress.projectId, actor))) throw new ClinAgentError('NOT_FOUND', `QC run "${qcRunId}" does not exist. Check the id.`, { qcRunId });
    return progress;
  }

  async function findTaskRun(actor: User, taskRunId: string) {
    const run = await getTaskRun(db, taskRunId);
    if (!run || !(await users.isMember(run.projectId, actor))) throw new ClinAgentError('NOT_FOUND', `Task run "${taskRunId}" does not exist. Check the id.`, { taskRunId });
    return run;
  }

  return {
    startQcRun: async (actor: User, projectId: string, skillId: string, recordIds?: string[]) => {
      await assertProjectWriter(users, actor, projectId);
      // A version activated by another process serves this run: checking costs one indexed query (stored-skill-catalog.ts).
      await deps.skills.refresh();
      return startQcRun({ db, jobs: jobs() }, { projectId, skill: deps.skills.get(skillId), recordIds, actor: actor.name });
    },
    qcRun: (actor: User, qcRunId: string) => findQcRun(actor, qcRunId),
    qcRuns: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      return listQcRuns(db, projectId);
    },
    taskRun: async (actor: User, taskRunId: string) => withReviewDescription(await findTaskRun(actor, taskRunId)),
    taskRuns: async (actor: User, projectId: string, filter: { qcRunId?: string; statuses?: string[] } = {}) => {
      await assertProjectReader(users, actor, projectId);
      return (await listTaskRuns(db, { projectId, ...filter })).map(withReviewDescription);
    },
    /** One page of task runs with the total; each run carries its findings as `actor` may see them (one request per page of the review queue). */
    taskRunPage: async (actor: User, request: TaskRunPageRequest) => {
      const view = await queryView(actor, request.projectId);
      const page = await pageTaskRuns(db, request);
      const findings = await runFindings(db, request.projectId, page.taskRuns.map((run) => run.id));
      return { ...page, taskRuns: page.taskRuns.map((run) => ({ ...withReviewDescription(run), findings: (findings.get(run.id) ?? []).map(view.query) })) };
    },
    /** One decision and comment over a selection of the review queue: whole runs or single findings (qc/review-decisions.ts). */
    decideReviews: async (actor: User, projectId: string, decision: 'approve' | 'reject', comment: string, items: ReviewSelection[]) => {
      await assertProjectWriter(users, actor, projectId);
      return decideReviews({ db, jobs: jobs() }, { projectId, actor: actor.name, decision, comment, items });
    },
    /** `shownDataHash`: the run's reviewRequest.dataHash as the reviewer saw it (the console sends it). */
    review: async (actor: User, taskRunId: string, decision: 'approve' | 'reject', comment?: string, shownDataHash?: string) => {
      const run = await findTaskRun(actor, taskRunId);
      await assertProjectWriter(users, actor, run.projectId);
      return reviewTaskRun({ db, jobs: jobs() }, taskRunId, decision, actor.name, comment, shownDataHash);
    },
  };
}

export type QcService = ReturnType<typeof createQcService>;
