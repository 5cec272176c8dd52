import type { FastifyPluginAsync } from 'fastify';
import type { QueryStatus } from '../../core/db/schema/trial.js';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/** Pending actions (data queries): list with filters, move along the lifecycle; the violations report. */
export const trialQueryRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.get<{ Params: { projectId: string }; Querystring: { status?: QueryStatus; site?: string; field?: string; severity?: string; recordId?: string; taskRunId?: string; limit?: number; offset?: number } }>(
    '/api/iit/projects/:projectId/queries',
    {
      schema: {
        tags: ['trial QC'], summary: 'Data queries (one per violation), filtered by status, site, field, severity, record or run',
        ...routeSchema('GET /api/iit/projects/:projectId/queries'),
      },
    },
    async (request) => ({ queries: await qc.queries(requireUser(request), { projectId: request.params.projectId, ...request.query }) }),
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
    async (request) => qc.transitionQuery(requireUser(request), request.params.projectId, request.params.id, request.body.to, request.body.comment ?? ''),
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
        const csv = await qc.reportCsv(user, projectId);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.csv"`).send(csv);
      }
      if (request.query.format === 'xlsx') {
        const xlsx = await qc.reportXlsx(user, projectId);
        return reply
          .type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.xlsx"`)
          .send(xlsx);
      }
      return qc.report(user, projectId);
    },
  );
};
