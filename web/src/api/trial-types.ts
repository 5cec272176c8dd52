// Server types that are already JSON-shaped (ISO timestamps) are imported for types only, so the console
// cannot drift from them; nothing of the server is bundled.
import type { QcProgress } from '../../../src/trial/qc/qc-runs.js';
import type { AuditEntityType, AuditEntry } from '../../../src/trial/store/types.js';
import type { ReviewRequest } from '../../../src/core/db/schema/trial.js';

/**
 * Shapes of the trial quality-control routes (src/http/routes/trial-data.ts, trial-qc.ts, trial-queries.ts)
 * as they arrive over JSON: timestamps are ISO strings. Row types that carry Date fields on the server are
 * mirrored here by hand.
 */

export interface TrialSite {
  /** REDCap data access group; '' when the project has none. */
  site: string;
  subjects: number;
}

export interface TrialProject {
  id: string;
  name: string;
  rows: number;
  subjects: number;
  sites: TrialSite[];
}

export interface QcSkill {
  id: string;
  name: string;
  description: string;
  /** Project ids the skill applies to; null means every project. */
  projects: string[] | null;
  /** 5-field cron expression in UTC, or null for a skill that only runs when started. */
  schedule: string | null;
  nextRun: string | null;
  nodes: number;
}

export type QcRunStatus = QcProgress['status'];

/** The server's progress type: it is built for JSON already (ISO timestamps). */
export type QcRunProgress = QcProgress;

export type TaskRunStatus = 'PENDING' | 'RUNNING' | 'SUSPENDED' | 'COMPLETED' | 'FAILED';

export interface TaskRunStep {
  node: string;
  type: string;
  at: string;
  outcome: string;
  next?: string;
  detail?: unknown;
}

export interface TaskRunReview {
  reviewer: string;
  decision: 'approve' | 'reject';
  comment: string;
  decidedAt: string;
}

export interface TaskRun {
  id: string;
  projectId: string;
  qcRunId: string | null;
  skillId: string;
  recordId: string;
  status: TaskRunStatus;
  currentNode: string;
  steps: TaskRunStep[];
  review: TaskRunReview | null;
  /** For a suspended run: what the reviewer is asked to check. */
  reviewDescription: string | null;
  /** Why the run waits for a person; `reason` is the technical reason when a soft rule got no usable verdict. */
  reviewRequest: ReviewRequest | null;
  /** Set while the run is being picked up again after its worker stopped. */
  recoveredAt: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

export type ReviewDecision = 'approve' | 'reject';

export type QueryStatus = 'open' | 'answered' | 'closed' | 'reopened' | 'cancelled';
/** Where a person can move a query; 'open' is only ever set by a QC run. */
export type QueryTransition = Exclude<QueryStatus, 'open' | 'cancelled'>;
export type QuerySeverity = 'error' | 'warning' | 'info';

/** A data query: one violation raised to a site, moved along its lifecycle by people. */
export interface DataQuery {
  id: string;
  projectId: string;
  taskRunId: string;
  recordId: string;
  eventName: string;
  site: string;
  nodeId: string;
  ruleId: string;
  field: string;
  message: string;
  severity: QuerySeverity;
  value: unknown;
  status: QueryStatus;
  createdAt: string;
  updatedAt: string;
  /** The run that last saw the finding fire. */
  lastTaskRunId: string | null;
  /** A suspended run whose review holds the query back from the site. */
  heldByTaskRunId: string | null;
  /** Set when a later run found the data no longer violates the rule. */
  noLongerFires: { taskRunId: string; qcRunId: string | null; at: string } | null;
  /** The moves the server's lifecycle allows next; the console offers exactly these. */
  allowedTransitions: QueryTransition[];
  /** The field is an identifier this user may not see: `value` is null. */
  masked?: boolean;
}

export interface QueryFilters {
  status?: QueryStatus;
  site?: string;
  field?: string;
  severity?: QuerySeverity;
  recordId?: string;
  taskRunId?: string;
}

export interface ReportCount {
  key: string;
  count: number;
}

export interface ViolationsReport {
  projectId: string;
  generatedAt: string;
  total: number;
  byField: ReportCount[];
  byRule: ReportCount[];
  bySite: ReportCount[];
  bySeverity: ReportCount[];
  byStatus: ReportCount[];
}

export type RecordValue = string | number | null;

export interface RecordEvent {
  eventName: string;
  site: string;
  data: Record<string, RecordValue>;
  version: number;
  updatedAt: string;
  /** Identifier fields hidden from this user: their value in `data` is null, and the console shows a mask. */
  maskedFields?: string[];
}

export type { AuditEntityType, AuditEntry };

export interface TrialRecordView {
  recordId: string;
  events: RecordEvent[];
  queries: DataQuery[];
  audit: AuditEntry[];
}

export interface DownloadedFile {
  blob: Blob;
  /** From Content-Disposition; null when the server sent none. */
  filename: string | null;
}
