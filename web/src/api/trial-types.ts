import type { DataQueryFilter, DataQueryListQuery } from '../../../src/contract/index.js';

/**
 * Shapes of the trial quality-control routes (src/http/routes/trial-data.ts, trial-qc.ts, trial-queries.ts) as
 * they arrive over JSON, from the API contract (src/contract); imported for types only.
 */
export type {
  AuditEntityType,
  CrfChoice,
  CrfEvent,
  CrfField,
  CrfForm,
  CrfValue,
  AuditEntry,
  BulkCloseQueriesResponse,
  DataQuery,
  DataQueryPage,
  ImportPreview,
  ImportProblem,
  ImportSummary,
  Project,
  QcRunProgress,
  QcRunStatus,
  QcSkill,
  QuerySeverity,
  QueryStatus,
  QuerySortColumn,
  QueryTransition,
  RecordCrf,
  RecordEvent,
  RecordValue,
  ReportCount,
  ReviewDecision,
  ReviewDecisionsRequest,
  ReviewDecisionsResponse,
  ReviewOutcome,
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

/** The query list's filters the console offers; paging and sorting are separate (QueryPageRequest). */
export type QueryFilters = DataQueryFilter;
/** One page of task runs (GET .../task-runs). */
export type { TaskRunList as TaskRunPage } from '../../../src/contract/index.js';
export type QueryPageRequest = Omit<DataQueryListQuery, keyof DataQueryFilter>;

export interface DownloadedFile {
  blob: Blob;
  /** From Content-Disposition; null when the server sent none. */
  filename: string | null;
}
