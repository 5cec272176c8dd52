import type { DataQueryFilter } from '../../../src/contract/index.js';

/**
 * Shapes of the trial quality-control routes (src/http/routes/trial-data.ts, trial-qc.ts, trial-queries.ts) as
 * they arrive over JSON, from the API contract (src/contract); imported for types only.
 */
export type {
  AuditEntityType,
  AuditEntry,
  DataQuery,
  QcRunProgress,
  QcRunStatus,
  QcSkill,
  QuerySeverity,
  QueryStatus,
  QueryTransition,
  RecordEvent,
  RecordValue,
  ReportCount,
  ReviewDecision,
  ReviewRequest,
  TaskRun,
  TaskRunReview,
  TaskRunStatus,
  TaskRunStep,
  TrialProject,
  TrialRecordView,
  TrialSite,
  ViolationsReport,
} from '../../../src/contract/index.js';

/** The query list's filters the console offers (paging stays at the server's default). */
export type QueryFilters = Omit<DataQueryFilter, 'limit' | 'offset'>;

export interface DownloadedFile {
  blob: Blob;
  /** From Content-Disposition; null when the server sent none. */
  filename: string | null;
}
