import type { FastifyPluginAsync } from 'fastify';
import type { QueryStatus } from '../../core/db/schema/trial.js';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { errorResponses, MAX_OFFSET, uuidString } from '../schemas.js';

const STATUSES = ['open', 'answered', 'closed', 'reopened', 'cancelled'];

const queryBody = {
  type: 'object',
  properties: {
    id: { type: 'string' }, projectId: { type: 'string' }, taskRunId: { type: 'string' }, recordId: { type: 'string' }, eventName: { type: 'string' }, site: { type: 'string' },
    nodeId: { type: 'string' }, ruleId: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' }, severity: { type: 'string' }, value: {},
    status: { type: 'string' }, createdAt: { type: 'string' }, updatedAt: { type: 'string' },
    lastTaskRunId: { type: ['string', 'null'], description: 'the run that last saw the finding fire' },
    heldByTaskRunId: { type: ['string', 'null'], description: 'the suspended run whose review holds this query back from the site' },
    noLongerFires: { type: ['object', 'null'], properties: { taskRunId: { type: 'string' }, qcRunId: { type: ['string', 'null'] }, at: { type: 'string' } }, description: 'set when a later run found the data no longer violates the rule' },
    allowedTransitions: { type: 'array', items: { type: 'string' }, description: 'the statuses this query may move to next' },
    masked: { type: 'boolean', description: 'true when the field is an identifier you may not see: value is then null' },
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
          properties: { status: { type: 'string', enum: STATUSES }, site: { type: 'string' }, field: { type: 'string' }, severity: { type: 'string', enum: ['error', 'warning', 'info'] }, recordId: { type: 'string' }, taskRunId: uuidString, limit: { type: 'integer', minimum: 1, maximum: 5000 }, offset: { type: 'integer', minimum: 0, maximum: MAX_OFFSET } },
          additionalProperties: false,
        },
        response: { 200: { type: 'object', properties: { queries: { type: 'array', items: queryBody } } }, ...errorResponses },
      },
    },
    async (request) => {
      const user = requireUser(request);
      await qc.assertMember(request.params.projectId, user);
      return { queries: await qc.queries({ projectId: request.params.projectId, ...request.query }, user) };
    },
  );

  app.post<{ Params: { projectId: string; id: string }; Body: { to: QueryStatus; comment?: string } }>(
    '/api/iit/projects/:projectId/queries/:id/transition',
    {
      config: { access: 'write' },
      schema: {
        tags: ['trial QC'], summary: 'Move a query: open -> answered -> closed, or reopened; a comment is required to answer or reopen',
        params: { type: 'object', properties: { projectId: { type: 'string' }, id: uuidString }, required: ['projectId', 'id'] },
        body: { type: 'object', properties: { to: { type: 'string', enum: STATUSES.filter((s) => s !== 'open' && s !== 'cancelled') }, comment: { type: 'string', maxLength: 5000 } }, required: ['to'], additionalProperties: false },
        response: { 200: queryBody, ...errorResponses },
      },
    },
    async (request) => {
      const user = requireUser(request);
      await qc.assertMember(request.params.projectId, user);
      return qc.transitionQuery(request.params.projectId, request.params.id, request.body.to, user, request.body.comment ?? '');
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
      const user = requireUser(request);
      await qc.assertMember(projectId, user);
      const stamp = new Date().toISOString().slice(0, 10);
      if (request.query.format === 'csv') {
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.csv"`).send(await qc.reportCsv(projectId, user));
      }
      if (request.query.format === 'xlsx') {
        return reply
          .type('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${projectId}-violations-${stamp}.xlsx"`)
          .send(await qc.reportXlsx(projectId, user));
      }
      return qc.report(projectId, user);
    },
  );
};
