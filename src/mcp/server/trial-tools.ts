import { z } from 'zod';
import { DataQueryListQuery, IdText, RecordsQuery, RuleYieldQuery, StartQcRunRequest, TransitionQueryRequest, Uuid } from '../../contract/index.js';
import type { User } from '../../core/auth/users.js';
import type { TrialServices } from '../../trial/trial-services.js';
import { withheldText, type McpTool } from './mcp-tool.js';

export type TrialToolServices = Pick<TrialServices, 'records' | 'queries' | 'reports' | 'qc'>;

const ProjectId = IdText.describe('the trial project id, as list_projects names it');
const project = { projectId: ProjectId };

/** The tools' arguments, built once: the registry converts each schema for tools/list once, whoever asks. */
const ARGS = {
  NO_ARGUMENTS: z.strictObject({}),
  LIST_QUERIES: z.strictObject({ ...project, ...DataQueryListQuery.shape }),
  LIST_RECORDS: z.strictObject({ ...project, ...RecordsQuery.shape }),
  READ_RECORD: z.strictObject({ ...project, recordId: IdText.describe('the record (subject) id, e.g. "S001"') }),
  PROJECT_ONLY: z.strictObject(project),
  QC_RUN_STATUS: z.strictObject({ qcRunId: Uuid.describe('the QC run id') }),
  RULE_YIELD: z.strictObject({ ...project, ...RuleYieldQuery.shape }),
  ANSWER_QUERY: z.strictObject({
    ...project,
    queryId: Uuid.describe('the query id, from list_queries'),
    comment: TransitionQueryRequest.shape.comment.unwrap().min(1, 'say what the site found or corrected').describe('what the site found or corrected'),
  }),
  START_QC_RUN: z.strictObject({ ...project, ...StartQcRunRequest.shape }),
};

type Row = { recordId: string; eventName: string; site: string };
type Query = { id: string; recordId: string; eventName: string; field: string; ruleId: string; status: string };
/** Where a row or a query sits, never its values: what a trace keeps of record data (see McpTool.traceResult). */
const rowPlace = (row: Row) => ({ recordId: row.recordId, eventName: row.eventName, site: row.site });
const queryPlace = (query: Query) => ({ id: query.id, recordId: query.recordId, eventName: query.eventName, field: query.field, ruleId: query.ruleId, status: query.status });

/**
 * The trial's reads and its two writes as tools acting for `actor`. Each calls the service method its REST route
 * calls, with the same arguments (the contract's own schemas), so access checks, identifier masking and audit lines
 * are the route's: a project the actor is not a member of answers NOT_FOUND, a viewer's change FORBIDDEN.
 */
export function trialTools(services: TrialToolServices, actor: User): McpTool[] {
  const { records, queries, reports, qc } = services;
  const tools: McpTool[] = [
    {
      name: 'list_projects',
      description: 'The trial projects you are a member of, with your role in each, subject and record counts and sites. Use their ids in the other tools.',
      schema: ARGS.NO_ARGUMENTS,
      run: async () => ({ projects: await records.projects(actor) }),
    },
    {
      name: 'list_queries',
      description: "One page of a project's data queries (one per rule violation), filtered by status, site, field, severity, record, rule or task run and sorted by a column; with the total and the counts per status. Values of identifier fields are masked unless you may see them.",
      schema: ARGS.LIST_QUERIES,
      run: ({ projectId, ...filter }: z.infer<typeof DataQueryListQuery> & { projectId: string }) => queries.page(actor, { ...filter, projectId }),
      traceResult: (page: { queries: Query[]; total: number; page: number; pageSize: number; counts: unknown }) => ({ total: page.total, page: page.page, pageSize: page.pageSize, counts: page.counts, queries: page.queries.map(queryPlace) }),
    },
    {
      name: 'list_records',
      description: 'Record rows (subject x event) of a project, optionally for one site, paged by limit and offset. Identifier fields are null and listed in maskedFields unless you are admin, PI or were granted access to identifiers.',
      schema: ARGS.LIST_RECORDS,
      run: async ({ projectId, ...page }: z.infer<typeof RecordsQuery> & { projectId: string }) => ({ records: await records.records(actor, projectId, page) }),
      traceResult: (result: { records: Row[] }) => ({ records: result.records.map(rowPlace) }),
    },
    {
      name: 'read_record',
      description: "One subject of a project: every event's values, its queries, its audit trail and its case report form, identifier fields masked as in list_records.",
      schema: ARGS.READ_RECORD,
      run: ({ projectId, recordId }: { projectId: string; recordId: string }) => records.record(actor, projectId, recordId),
      traceResult: (record: { recordId: string; events: Row[]; queries: Query[]; audit: unknown[] }) => ({ recordId: record.recordId, events: record.events.map(rowPlace), queries: record.queries.map(queryPlace), auditEntries: record.audit.length }),
    },
    {
      name: 'list_qc_runs',
      description: "A project's QC runs, newest first, each with its progress (done, total, failed) and status.",
      schema: ARGS.PROJECT_ONLY,
      run: async ({ projectId }: { projectId: string }) => ({ qcRuns: await qc.qcRuns(actor, projectId) }),
    },
    {
      name: 'qc_run_status',
      description: 'The progress of one QC run (done / total / failed, status), by the id start_qc_run or list_qc_runs gave.',
      schema: ARGS.QC_RUN_STATUS,
      run: ({ qcRunId }: { qcRunId: string }) => qc.qcRun(actor, qcRunId),
    },
    {
      name: 'violations_report',
      description: "A project's violations report: counts by field, rule, site and severity, and one row per query (identifier values masked unless you may see them).",
      schema: ARGS.PROJECT_ONLY,
      run: ({ projectId }: { projectId: string }) => reports.violations(actor, projectId),
      // The counts say what the report found; the rows hold the values.
      traceResult: ({ rows, ...counts }: { rows: unknown[] } & Record<string, unknown>) => ({ ...counts, rows: rows.length }),
    },
    {
      name: 'rule_yield',
      description: "Per skill, rule and field: queries raised, open, held, answered, closed with or without a data change, and the yield (closed with a change / closed), so low-yield rules can move to central review. Counts only.",
      schema: ARGS.RULE_YIELD,
      run: ({ projectId, ...filter }: z.infer<typeof RuleYieldQuery> & { projectId: string }) => reports.ruleYield(actor, projectId, filter),
    },
    {
      name: 'answer_query',
      description: 'Mark an open or reopened data query answered, with what the site found (the comment is required and audited). Closing and reopening stay with data management in ClinAgent.',
      writes: true,
      schema: ARGS.ANSWER_QUERY,
      run: ({ projectId, queryId, comment }: { projectId: string; queryId: string; comment: string }) => queries.transition(actor, projectId, queryId, 'answered', comment),
      traceArguments: (args) => (args && typeof args === 'object' ? { ...args, comment: withheldText((args as { comment?: unknown }).comment) } : withheldText(args)),
      traceResult: (query: Query) => queryPlace(query),
    },
    {
      name: 'start_qc_run',
      description: "Start a QC run of a skill over all of a project's records, or the ones named; follow it with qc_run_status.",
      writes: true,
      schema: ARGS.START_QC_RUN,
      run: ({ projectId, skillId, recordIds }: { projectId: string; skillId: string; recordIds?: string[] }) => qc.startQcRun(actor, projectId, skillId, recordIds),
    },
  ];
  return tools;
}
