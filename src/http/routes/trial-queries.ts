import type { FastifyPluginAsync } from 'fastify';
import type { QueryStatus } from '../../core/db/schema/trial.js';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { errorResponses } from '../schemas.js';

const STATUSES = ['open', 'answered', 'closed', 'reopened'];

const queryBody = {
  type: 'object',
  properties: {
    id: { type: 'string' }, projectId: { type: 'string' }, taskRunId: { type: 'string' }, recordId: { type: 'string' }, eventName: { type: 'string' }, site: { type: 'string' },
    nodeId: { type: 'string' }, ruleId: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' }, severity: { type: 'string' }, value: {},
    status: { type: 'string' }, createdAt: { type: 'string' }, updatedAt: { type: 'string' },
    allowedTransitions: { type: 'array', items: { type: 'string' }, description: 'the statuses this query may move to next' },
  },
} as const;

const projectParams = { type: 'object', properties: { projectId: { type: 'string' } }, required: ['projectId'] } as const;

/** Pending actions (data queries): list with filters, move along the lifecycle; the violations report. */
export const trialQueryRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.get<{ Params: { projectId: string }; Querystring: { status?: QueryStatus; site?: string; field?: string; severity?: string; recordId?: string; taskRunId?: string; limit?: number; offset?: number } }>(
    '/api/iit/projects/:projectId/queries',
    {
      schema: {
        tags: ['trial QC'], summary: 'Data queries (one per violation), filtered by status, site, field, severity, record or run',
        params: projectParams,
        querystring: {
          type: 'object',
          properties: { status: { type: 'string', enum: STATUSES }, site: { type: 'string' }, field: { type: 'string' }, severity: { type: 'string', enum: ['error', 'warning', 'info'] }, recordId: { type: 'string' }, taskRunId: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 5000 }, offset: { type: 'integer', minimum: 0 } },
          additionalProperties: false,
        },
        response: { 200: { type: 'object', properties: { queries: { type: 'array', items: queryBody } } }, ...errorResponses },
      },
    },
    async (request) => {
      await qc.assertMember(request.params.projectId, requireUser(request));
      return { queries: await qc.queries({ projectId: request.params.projectId, ...request.query }) };
    },
  );

  app.post<{ Params: { projectId: string; id: string }; Body: { to: QueryStatus; comment?: string } }>(
    '/api/iit/projects/:projectId/queries/:id/transition',
    {
      config: { access: 'write' },
      schema: {
        tags: ['trial QC'], summary: 'Move a query: open -> answered -> closed, or reopened; a comment is required to answer or reopen',
        params: { type: 'object', properties: { projectId: { type: 'string' }, id: { type: 'string' } }, required: ['projectId', 'id'] },
        body: { type: 'object', properties: { to: { type: 'string', enum: STATUSES.filter((s) => s !== 'open') }, comment: { type: 'string', maxLength: 5000 } }, required: ['to'], additionalProperties: false },
        response: { 200: queryBody, ...errorResponses },
      },
    },
    async (request) => {
      const user = requireUser(request);
      await qc.assertMember(request.params.projectId, user);
      return qc.transitionQuery(request.params.projectId, request.params.id, request.body.to, user.name, request.body.comment ?? '');
    },
  );

  app.get<{ Params: { projectId: string }; Querystring: { format?: 'json' | 'csv' | 'xlsx' } }>(
    '/api/iit/projects/:projectId/report',
    {
      schema: {
        tags: ['trial QC'], summary: 'Violations by field, rule, site and severity; format=csv or xlsx to download',
        params: projectParams,
        querystring: { type: 'object', properties: { format: { type: 'string', enum: ['json', 'csv', 'xlsx'], default: 'json' } }, additionalProperties: false },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      await qc.assertMember(projectId, requireUser(request));
      const stamp = new Date().toISOString().slice(0, 10);
      if (request.query.format === 'csv') {
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.csv"`).send(await qc.reportCsv(projectId));
      }
      if (request.query.format === 'xlsx') {
        return reply
          .type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.xlsx"`)
          .send(await qc.reportXlsx(projectId));
      }
      return qc.report(projectId);
    },
  );
};
