import { z } from 'zod';
import { MAX_OFFSET, NameText, Uuid } from './common.js';

/** `cancelled`: withdrawn before it reached the site (a rejected review), as opposed to closed after resolution. */
export const QueryStatus = z.enum(['open', 'answered', 'closed', 'reopened', 'cancelled']);
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
export const DataQueryList = z.object({ queries: z.array(DataQuery) });

/** GET /api/iit/projects/:projectId/queries */
export const DataQueryFilter = z.strictObject({
  status: QueryStatus.optional(),
  site: NameText.optional(),
  field: NameText.optional(),
  severity: QuerySeverity.optional(),
  recordId: NameText.optional(),
  taskRunId: Uuid.optional(),
  limit: z.int().min(1).max(5000).optional(),
  offset: z.int().min(0).max(MAX_OFFSET).optional(),
});
export type DataQueryFilter = z.infer<typeof DataQueryFilter>;

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

export const ReportRow = z.object({
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
export type ReportRow = z.infer<typeof ReportRow>;

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
  rows: z.array(ReportRow),
});
export type ViolationsReport = z.infer<typeof ViolationsReport>;
