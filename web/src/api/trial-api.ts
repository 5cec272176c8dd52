import type { HttpClient } from './http-client';
import type {
  AuditEntityType,
  AuditEntry,
  BulkCloseQueriesResponse,
  DataQuery,
  DataQueryPage,
  DownloadedFile,
  ImportPreview,
  ImportSummary,
  Project,
  QcRunProgress,
  QcSkill,
  QueryFilters,
  QueryPageRequest,
  QueryTransition,
  RecordEvent,
  ReviewDecisionsRequest,
  ReviewDecisionsResponse,
  TaskRun,
  TaskRunPage,
  TaskRunStatus,
  TrialProject,
  TrialRecordView,
  ViolationsReport,
} from './trial-types';

/** `?a=1&b=2` from the defined, non-empty values; '' when there are none. */
export function queryString(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

const segment = encodeURIComponent;

/** The server's largest page of queries (src/contract/trial-queries.ts QUERY_PAGE_SIZE_MAX). */
const LARGEST_QUERY_PAGE = 500;

function stringValues(values: Record<string, string | number | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value === undefined ? undefined : String(value)]));
}

/** The files of one export: a REDCap CSV export (dictionary and records, optional events and arms) or one ODM file. */
export type ImportFiles = Partial<Record<'dictionary' | 'events' | 'arms' | 'records' | 'odm', File>>;

/** The multipart body of an import: each chosen file under its part name, with its own file name for messages. */
export function importForm(files: ImportFiles): FormData {
  const form = new FormData();
  for (const [part, file] of Object.entries(files)) if (file) form.append(part, file, file.name);
  return form;
}

/** One typed function per trial quality-control route (projects, skills, QC runs, reviews, queries, audit). */
export function createTrialApi(http: HttpClient) {
  const project = (projectId: string) => `/api/iit/projects/${segment(projectId)}`;
  return {
    listProjects: async () => (await http.get<{ projects: TrialProject[] }>('/api/iit/projects')).projects,
    /** Admins: a new (empty) project, which then takes its data from an import. */
    createProject: (id: string, name: string) => http.post<Project>('/api/projects', { id, name }),
    /** What importing these files would do, or every problem it would refuse; the server writes nothing. */
    previewImport: (projectId: string, files: ImportFiles) => http.post<ImportPreview>(`${project(projectId)}/imports?preview=true`, importForm(files)),
    importFiles: (projectId: string, files: ImportFiles) => http.post<ImportSummary>(`${project(projectId)}/imports`, importForm(files)),
    listSkills: async () => (await http.get<{ skills: QcSkill[] }>('/api/iit/skills')).skills,

    startQcRun: (projectId: string, skillId: string, recordIds?: string[]) =>
      http.post<QcRunProgress>(`${project(projectId)}/qc-runs`, recordIds ? { skillId, recordIds } : { skillId }),
    listQcRuns: async (projectId: string) => (await http.get<{ qcRuns: QcRunProgress[] }>(`${project(projectId)}/qc-runs`)).qcRuns,
    getQcRun: (qcRunId: string) => http.get<QcRunProgress>(`/api/iit/qc-runs/${segment(qcRunId)}`),

    /** One page of task runs with the total, each with its findings (the review queue: status SUSPENDED, oldest first). */
    pageTaskRuns: (projectId: string, filter: { status?: TaskRunStatus; qcRunId?: string } = {}, paging: { page?: number; pageSize?: number } = {}) =>
      http.get<TaskRunPage>(`${project(projectId)}/task-runs${queryString({ ...filter, ...stringValues(paging) })}`),
    /** One decision and comment over a selection of the review queue: whole runs, or single findings of a run. */
    decideReviews: (projectId: string, body: ReviewDecisionsRequest) => http.post<ReviewDecisionsResponse>(`${project(projectId)}/reviews`, body),
    getTaskRun: (taskRunId: string) => http.get<TaskRun>(`/api/iit/task-runs/${segment(taskRunId)}`),

    /** One page of queries, sorted, with the total and the counts per status. */
    pageQueries: (projectId: string, filters: QueryFilters = {}, paging: QueryPageRequest = {}) =>
      http.get<DataQueryPage>(`${project(projectId)}/queries${queryString({ ...filters, ...stringValues(paging) })}`),
    /** Every matching query (a run's, a record's), fetched page by page so none is cut off. */
    listQueries: async (projectId: string, filters: QueryFilters = {}) => {
      const queries: DataQuery[] = [];
      for (let page = 1; ; page += 1) {
        const result = await http.get<DataQueryPage>(`${project(projectId)}/queries${queryString({ ...filters, page: String(page), pageSize: String(LARGEST_QUERY_PAGE) })}`);
        queries.push(...result.queries);
        if (result.queries.length < LARGEST_QUERY_PAGE || queries.length >= result.total) return queries;
      }
    },
    /** Closes the listed queries with one reason; the ones that cannot close come back with why. */
    bulkCloseQueries: (projectId: string, queryIds: string[], reason: string) =>
      http.post<BulkCloseQueriesResponse>(`${project(projectId)}/queries/bulk-close`, { queryIds, reason }),
    transitionQuery: (projectId: string, queryId: string, to: QueryTransition, comment: string) =>
      http.post<DataQuery>(`${project(projectId)}/queries/${segment(queryId)}/transition`, { to, comment }),

    getReport: (projectId: string) => http.get<ViolationsReport>(`${project(projectId)}/report`),
    downloadReport: (projectId: string, format: 'csv' | 'xlsx'): Promise<DownloadedFile> =>
      http.getFile(`${project(projectId)}/report?format=${format}`),

    getRecord: (projectId: string, recordId: string) => http.get<TrialRecordView>(`${project(projectId)}/records/${segment(recordId)}`),
    /** Record rows (one per record and event), in record order; `limit` of them from the first. */
    listRecords: async (projectId: string, limit: number) => (await http.get<{ records: RecordEvent[] }>(`${project(projectId)}/records?limit=${limit}`)).records,
    listAudit: async (projectId: string, filter: { entityType?: AuditEntityType; entityId?: string } = {}) =>
      (await http.get<{ entries: AuditEntry[] }>(`${project(projectId)}/audit${queryString(filter)}`)).entries,
  };
}

export type TrialApi = ReturnType<typeof createTrialApi>;
