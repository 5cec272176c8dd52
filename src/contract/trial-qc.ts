import { z } from 'zod';
import { IdText, MAX_OFFSET, Uuid } from './common.js';
import { DataQuery } from './trial-queries.js';

/** A QC skill (SOP flowchart) with its schedule. */
export const QcSkill = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  projects: z.array(z.string()).nullable().describe('project ids the skill applies to; null: every project'),
  schedule: z.string().nullable().describe('5-field cron expression in UTC; null: runs only when started'),
  nextRun: z.string().nullable(),
  nodes: z.int(),
  file: z.string().describe('the skills/ file the version was seeded from, or database:<id>@<version> for one written in the editor'),
  status: z.enum(['active', 'draft', 'invalid']).describe('draft: saved but never activated; invalid: a skill file (or stored version) with problems that no QC run can use until a fixed version is activated (listed to admins only)'),
  problems: z.array(z.string()).describe('what is wrong with an invalid skill, one `path: reason` line each; empty otherwise'),
  version: z.int().nullable().describe('the active stored version; null for a draft or an invalid file'),
  draftVersion: z.int().nullable().describe('the newest draft saved after the active version, if any'),
  updatedAt: z.string().nullable().describe('when the active version was activated (a draft: saved)'),
  updatedBy: z.string().nullable(),
});
export type QcSkill = z.infer<typeof QcSkill>;
export const QcSkillList = z.object({ skills: z.array(QcSkill) });

export const QcRunStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled', 'waiting_review']);
export type QcRunStatus = z.infer<typeof QcRunStatus>;

/** A QC run (one skill over a project's records) and how far its task runs got. */
export const QcRunProgress = z.object({
  id: z.string(),
  projectId: z.string(),
  skillId: z.string(),
  status: QcRunStatus,
  trigger: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  total: z.int(),
  done: z.int().describe('runs whose work is over for now: completed, failed or waiting for review'),
  pending: z.int(),
  running: z.int(),
  suspended: z.int(),
  completed: z.int(),
  failed: z.int(),
  recovering: z.int().describe('runs picked up again after their worker stopped'),
  notChecked: z.int().describe('failed runs whose records were not checked because the model was unavailable'),
  summary: z.string().nullable().describe('what a person needs to know about the run in one sentence (records not checked), or null'),
});
export type QcRunProgress = z.infer<typeof QcRunProgress>;
export const QcRunList = z.object({ qcRuns: z.array(QcRunProgress) });

/** POST /api/iit/projects/:projectId/qc-runs */
export const StartQcRunRequest = z.strictObject({
  skillId: IdText,
  recordIds: z.array(IdText).max(100_000).optional().describe('omitted: every record of the project'),
});
export type StartQcRunRequest = z.infer<typeof StartQcRunRequest>;

export const TaskRunStatus = z.enum(['PENDING', 'RUNNING', 'SUSPENDED', 'COMPLETED', 'FAILED']);
export type TaskRunStatus = z.infer<typeof TaskRunStatus>;

/** One step of an SOP run: the node, what came of it and where the run went next. */
export const TaskRunStep = z.looseObject({
  node: z.string(),
  type: z.string(),
  at: z.string(),
  outcome: z.string().describe('pass, fail, error, suspended, approve, reject, notified or notify_failed'),
  next: z.string().optional(),
  detail: z.unknown().optional(),
});
export type TaskRunStep = z.infer<typeof TaskRunStep>;

export const ReviewDecision = z.enum(['approve', 'reject']);
export type ReviewDecision = z.infer<typeof ReviewDecision>;

export const TaskRunReview = z.looseObject({ reviewer: z.string(), decision: ReviewDecision, comment: z.string(), decidedAt: z.string() });
export type TaskRunReview = z.infer<typeof TaskRunReview>;

/** What a suspended run shows its reviewer; `finding` is the query a reject opens (a soft rule without a verdict). */
export const ReviewRequest = z.looseObject({
  kind: z.enum(['review_node', 'soft_rule_unresolved']),
  node: z.string(),
  description: z.string(),
  reason: z.string().optional().describe('the technical reason, for the reviewer only'),
  finding: z.looseObject({ ruleId: z.string(), field: z.string(), message: z.string(), severity: z.enum(['error', 'warning', 'info']) }).optional(),
  onRejectQueries: z.enum(['cancel', 'close']).optional(),
  dataHash: z.string().optional().describe('sha256 of what the reviewer is shown (record versions, held queries); send it back with the decision'),
});
export type ReviewRequest = z.infer<typeof ReviewRequest>;

/** One SOP run of a skill on one record. */
export const TaskRun = z.object({
  id: z.string(),
  projectId: z.string(),
  qcRunId: z.string().nullable(),
  skillId: z.string(),
  recordId: z.string(),
  status: TaskRunStatus,
  currentNode: z.string(),
  steps: z.array(TaskRunStep),
  review: TaskRunReview.nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
  reviewDescription: z.string().nullable().optional().describe('for a suspended run, what the reviewer is asked to check'),
  reviewRequest: ReviewRequest.nullable().describe('why the run waits for a person (a review node, or a soft rule the model could not judge, with the technical reason)'),
  recoveredAt: z.string().nullable().describe('set while the run is picked up again after its worker stopped'),
  findings: z.array(DataQuery).optional().describe('in a list: the queries the run holds back for its review (decided per finding) and those it saw fire that are already at the site'),
});
export type TaskRun = z.infer<typeof TaskRun>;

const TASK_RUN_PAGE_SIZE_MAX = 500;

/** One page of task runs: the review queue reads oldest first, other lists newest first. */
export const TaskRunList = z.object({
  taskRuns: z.array(TaskRun),
  total: z.int().describe('matching runs over all pages'),
  page: z.int(),
  pageSize: z.int(),
});
export type TaskRunList = z.infer<typeof TaskRunList>;

/** GET /api/iit/projects/:projectId/task-runs; status=SUSPENDED is the review queue. */
export const TaskRunFilter = z.strictObject({
  status: TaskRunStatus.optional(),
  qcRunId: Uuid.optional(),
  page: z.int().min(1).max(Math.floor(MAX_OFFSET / TASK_RUN_PAGE_SIZE_MAX)).optional().describe('1-based; default 1'),
  pageSize: z.int().min(1).max(TASK_RUN_PAGE_SIZE_MAX).optional().describe('default 50'),
});
export type TaskRunFilter = z.infer<typeof TaskRunFilter>;

/**
 * POST /api/iit/projects/:projectId/reviews: one decision with one comment over a selection of the review queue,
 * whole runs or single findings of a run.
 */
export const ReviewDecisionsRequest = z.strictObject({
  decision: ReviewDecision,
  comment: z.string().max(5000).optional(),
  items: z
    .array(z.strictObject({
      taskRunId: Uuid,
      dataHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be the 64-hex dataHash of the run as shown').optional().describe('the run\'s reviewRequest.dataHash as shown: a run checked again since then is refused'),
      queryIds: z.array(Uuid).min(1).max(200).optional().describe('the findings (held queries) decided; omitted: the whole run'),
    }))
    .min(1)
    .max(1000),
});
export type ReviewDecisionsRequest = z.infer<typeof ReviewDecisionsRequest>;

export const ReviewOutcome = z.object({
  taskRunId: z.string(),
  status: z.enum(['decided', 'partly_decided', 'refused']).describe('partly_decided: other findings of the run still wait; refused: nothing applied to this run'),
  decision: ReviewDecision.optional().describe('for a decided run, how its review ended; decided finding by finding, approve when any finding went to the site'),
  settled: z.int().optional().describe('findings sent to the site or withdrawn by this decision'),
  code: z.string().optional(),
  reason: z.string().optional().describe('review_data_changed: the record changed since it was shown; already_decided: someone decided first'),
  message: z.string().optional(),
  dataHash: z.string().optional().describe('for a run still waiting: the dataHash of what it shows now'),
});
export type ReviewOutcome = z.infer<typeof ReviewOutcome>;
export const ReviewDecisionsResponse = z.object({ decided: z.int(), results: z.array(ReviewOutcome) });
export type ReviewDecisionsResponse = z.infer<typeof ReviewDecisionsResponse>;

/** POST /api/iit/task-runs/:id/review */
export const ReviewTaskRunRequest = z.strictObject({
  decision: ReviewDecision,
  comment: z.string().max(5000).optional(),
  /** The run's reviewRequest.dataHash as the reviewer saw it: a run checked again since then refuses the decision (409). */
  dataHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be the 64-hex dataHash of the run as shown').optional(),
});
export type ReviewTaskRunRequest = z.infer<typeof ReviewTaskRunRequest>;
