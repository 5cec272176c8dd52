import type { FastifyPluginAsync } from 'fastify';
import type { QueryStatus } from '../../core/db/schema/trial.js';
import type { QueryService } from '../../trial/queries/query-service.js';
import type { ReportService } from '../../trial/report/report-service.js';
import type { QueryPageRequest } from '../../trial/queries/query-page.js';
import type { BulkCloseFilter } from '../../trial/queries/bulk-close.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/** Pending actions (data queries): pages with filters and sorting, moves along the lifecycle, bulk close; the violations report. */
export const trialQueryRoutes: FastifyPluginAsync<{ queries: QueryService; reports: Pick<ReportService, 'violations' | 'violationsCsv' | 'violationsXlsx'> }> = async (app, { queries, reports }) => {
  app.get<{ Params: { projectId: string }; Querystring: Omit<QueryPageRequest, 'projectId'> }>(
    '/api/iit/projects/:projectId/queries',
    {
      schema: {
        tags: ['trial QC'], summary: 'One page of data queries (one per violation), filtered by status, site, field, severity, record, rule or run, sorted by a column; with the total and the counts per status',
        ...routeSchema('GET /api/iit/projects/:projectId/queries'),
      },
    },
    async (request) => queries.page(requireUser(request), { ...request.query, projectId: request.params.projectId }),
  );

  app.post<{ Params: { projectId: string }; Body: { queryIds?: string[]; filter?: BulkCloseFilter; reason: string } }>(
    '/api/iit/projects/:projectId/queries/bulk-close',
    {
      config: { access: 'write' },
      schema: {
        tags: ['trial QC'], summary: 'Close many queries with one reason (listed by id, or every closable one a filter matches); each is audited; the ones that cannot close are listed with why',
        ...routeSchema('POST /api/iit/projects/:projectId/queries/bulk-close'),
      },
    },
    async (request) => queries.bulkClose(requireUser(request), request.params.projectId, request.body),
  );

  app.post<{ Params: { projectId: string; id: string }; Body: { to: QueryStatus; comment?: string } }>(
    '/api/iit/projects/:projectId/queries/:id/transition',
    {
      config: { access: 'write' },
      schema: {
        tags: ['trial QC'], summary: 'Move a query: open -> answered -> closed, or reopened; a comment is required to answer or reopen',
        ...routeSchema('POST /api/iit/projects/:projectId/queries/:id/transition'),
      },
    },
    async (request) => queries.transition(requireUser(request), request.params.projectId, request.params.id, request.body.to, request.body.comment ?? ''),
  );

  app.get<{ Params: { projectId: string }; Querystring: { format?: 'json' | 'csv' | 'xlsx' } }>(
    '/api/iit/projects/:projectId/report',
    {
      schema: {
        tags: ['trial QC'], summary: 'Violations by field, rule, site and severity; format=csv or xlsx to download',
        ...routeSchema('GET /api/iit/projects/:projectId/report'),
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const user = requireUser(request);
      const stamp = new Date().toISOString().slice(0, 10);
      // The file is made (and access checked) before the download headers are set, so a refusal is plain JSON.
      if (request.query.format === 'csv') {
        const csv = await reports.violationsCsv(user, projectId);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.csv"`).send(csv);
      }
      if (request.query.format === 'xlsx') {
        const xlsx = await reports.violationsXlsx(user, projectId);
        return reply
          .type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.xlsx"`)
          .send(xlsx);
      }
      return reports.violations(user, projectId);
    },
  );
};
