import { z } from 'zod';
import { MAX_OFFSET, NameText, Uuid } from './common.js';
import { RuleYieldRow } from './trial-rule-yield.js';

/**
 * `held`: raised by a run and kept from the site until its review sends it (open) or withdraws it; nobody can
 * answer or close it before then. `cancelled`: withdrawn before it reached the site (a rejected review), as
 * opposed to closed after resolution.
 */
export const QueryStatus = z.enum(['held', 'open', 'answered', 'closed', 'reopened', 'cancelled']);
export type QueryStatus = z.infer<typeof QueryStatus>;
/** Where a person can move a query; `open` is only ever set by a QC run, `cancelled` by a rejected review. */
export const QueryTransition = z.enum(['answered', 'closed', 'reopened']);
export type QueryTransition = z.infer<typeof QueryTransition>;
export const QuerySeverity = z.enum(['error', 'warning', 'info']);
export type QuerySeverity = z.infer<typeof QuerySeverity>;

/** A data query: one violation raised to a site, moved along its lifecycle by people. */
export const DataQuery = z.object({
  id: z.string(),
  projectId: z.string(),
  taskRunId: z.string(),
  recordId: z.string(),
  eventName: z.string(),
  site: z.string(),
  nodeId: z.string(),
  ruleId: z.string(),
  field: z.string(),
  message: z.string(),
  severity: QuerySeverity,
  value: z.unknown().describe('the value the rule read when it last fired; null when masked'),
  status: QueryStatus,
  createdAt: z.string(),
  updatedAt: z.string(),
  lastTaskRunId: z.string().nullable().describe('the run that last saw the finding fire'),
  heldByTaskRunId: z.string().nullable().describe('the suspended run whose review holds this query back from the site'),
  noLongerFires: z
    .object({ taskRunId: z.string(), qcRunId: z.string().nullable(), at: z.string() })
    .nullable()
    .describe('set when a later run found the data no longer violates the rule'),
  allowedTransitions: z.array(QueryTransition).describe('the statuses this query may move to next'),
  masked: z.boolean().optional().describe('true when the field is an identifier you may not see: value is then null'),
});
export type DataQuery = z.infer<typeof DataQuery>;

/** What a list of queries is narrowed by (the list, its counts and a bulk close by filter). */
export const DataQueryFilter = z.strictObject({
  status: QueryStatus.optional(),
  site: NameText.optional(),
  field: NameText.optional(),
  severity: QuerySeverity.optional(),
  recordId: NameText.optional(),
  ruleId: NameText.optional().describe('the rule that raised the query (its id in the skill)'),
  taskRunId: Uuid.optional(),
});
export type DataQueryFilter = z.infer<typeof DataQueryFilter>;

/** The columns a query list sorts by (src/trial/queries/query-page.ts QUERY_SORT_COLUMNS). */
export const QuerySortColumn = z.enum(['createdAt', 'updatedAt', 'status', 'recordId', 'eventName', 'field', 'ruleId', 'site', 'severity']);
export type QuerySortColumn = z.infer<typeof QuerySortColumn>;
export const QUERY_PAGE_SIZE_MAX = 500;

/** GET /api/iit/projects/:projectId/queries */
export const DataQueryListQuery = z.strictObject({
  ...DataQueryFilter.shape,
  page: z.int().min(1).max(Math.floor(MAX_OFFSET / QUERY_PAGE_SIZE_MAX)).optional().describe('1-based; default 1'),
  pageSize: z.int().min(1).max(QUERY_PAGE_SIZE_MAX).optional().describe('default 50'),
  sort: QuerySortColumn.optional().describe('default createdAt; severity and status sort by rank (info < warning < error; the lifecycle order)'),
  order: z.enum(['asc', 'desc']).optional().describe('default desc'),
});
export type DataQueryListQuery = z.infer<typeof DataQueryListQuery>;

/** One page of queries; ties are broken by record and id, so every query is on exactly one page. */
export const DataQueryPage = z.object({
  queries: z.array(DataQuery),
  total: z.int().describe('matching queries over all pages'),
  page: z.int(),
  pageSize: z.int(),
  counts: z.record(QueryStatus, z.int()).describe('queries per status for the same filters except status'),
});
export type DataQueryPage = z.infer<typeof DataQueryPage>;

/** POST /api/iit/projects/:projectId/queries/bulk-close: queryIds or filter, exactly one of them. */
export const BulkCloseQueriesRequest = z.strictObject({
  queryIds: z.array(NameText).min(1).max(1000).optional().describe('the queries to close; an id not in this project is skipped as not found'),
  filter: DataQueryFilter.optional().describe('instead of queryIds: close every closable query it matches (at most 5000)'),
  reason: z.string().min(1).max(500).describe('why these queries need no further action; the audit reason of each'),
});
export type BulkCloseQueriesRequest = z.infer<typeof BulkCloseQueriesRequest>;

export const BulkCloseQueriesResponse = z.object({
  closed: z.int(),
  skipped: z.array(
    z.object({
      id: z.string(),
      status: QueryStatus.nullable().describe('null when the project has no such query'),
      recordId: z.string().nullable().describe('the record the query is on (null when no such query exists)'),
      eventName: z.string().nullable(),
      field: z.string().nullable(),
      why: z.string().describe('names the record and field, not the query id'),
    }),
  ),
});
export type BulkCloseQueriesResponse = z.infer<typeof BulkCloseQueriesResponse>;

/** POST /api/iit/projects/:projectId/queries/:id/transition */
export const TransitionQueryRequest = z.strictObject({
  to: QueryTransition,
  comment: z.string().max(5000).optional().describe('required to answer or reopen'),
});
export type TransitionQueryRequest = z.infer<typeof TransitionQueryRequest>;
export const TransitionQueryParams = z.object({ projectId: z.string(), id: Uuid });

/** GET /api/iit/projects/:projectId/report */
export const ReportQuery = z.strictObject({ format: z.enum(['json', 'csv', 'xlsx']).default('json') });

export const ReportCount = z.object({ key: z.string(), count: z.int() });
export type ReportCount = z.infer<typeof ReportCount>;

const ReportRow = z.object({
  recordId: z.string(),
  eventName: z.string(),
  site: z.string(),
  field: z.string(),
  ruleId: z.string(),
  severity: z.string(),
  status: z.string(),
  message: z.string(),
  value: z.union([z.string(), z.number()]).describe('a number stays a number; anything else is text (JSON for objects); •••• when masked'),
  createdAt: z.string(),
  masked: z.boolean(),
});
type ReportRow = z.infer<typeof ReportRow>;

/** The violations report (format=json): counts by field, rule, site, severity and status, and every row. */
export const ViolationsReport = z.object({
  projectId: z.string(),
  generatedAt: z.string(),
  total: z.int(),
  byField: z.array(ReportCount),
  byRule: z.array(ReportCount),
  bySite: z.array(ReportCount),
  bySeverity: z.array(ReportCount),
  byStatus: z.array(ReportCount),
  ruleYield: z.array(RuleYieldRow).describe('what each rule\'s queries came to; counts only'),
  rows: z.array(ReportRow),
});
export type ViolationsReport = z.infer<typeof ViolationsReport>;
