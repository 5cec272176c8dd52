import type { FastifyPluginAsync } from 'fastify';
import { routeSchema, type RuleYieldQuery } from '../../contract/index.js';
import type { RuleYieldReader } from '../../trial/report/rule-yield-reader.js';
import { requireUser } from '../access.js';

/** Rule yield: what each rule's queries came to, so low-yield rules can move to central review. */
export const trialRuleYieldRoutes: FastifyPluginAsync<{ reader: RuleYieldReader }> = async (app, { reader }) => {
  app.get<{ Params: { projectId: string }; Querystring: RuleYieldQuery }>(
    '/api/iit/projects/:projectId/rule-yield',
    {
      schema: {
        tags: ['trial QC'],
        summary: 'Per skill, rule and field: queries raised, open, held, answered, closed with a data change, closed without one, closed as no longer firing, cancelled, and the yield (closed with a change / closed)',
        ...routeSchema('GET /api/iit/projects/:projectId/rule-yield'),
      },
    },
    async (request) => reader.ruleYield(requireUser(request), request.params.projectId, request.query),
  );
};
