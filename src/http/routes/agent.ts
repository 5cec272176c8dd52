import type { FastifyPluginAsync } from 'fastify';
import { runAgent } from '../../agent/run-agent.js';
import type { AppContext } from '../../context.js';
import { requireUser } from '../access.js';
import { agentResultBody, errorResponses } from '../schemas.js';

interface RunBody {
  scenarioId: string;
  input: string;
  options?: { documentIds?: string[] };
}

export const agentRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post<{ Body: RunBody }>(
    '/api/agent/run',
    {
      config: { access: 'write' },
      schema: {
        tags: ['agent'],
        summary: 'Run a scenario on one input; returns an AgentResult (status "failed" with an error when the run could not complete)',
        body: {
          type: 'object',
          properties: {
            scenarioId: { type: 'string', minLength: 1 },
            input: { type: 'string', minLength: 1, maxLength: 20_000 },
            options: { type: 'object', properties: { documentIds: { type: 'array', items: { type: 'string' }, maxItems: 200 } }, additionalProperties: false },
          },
          required: ['scenarioId', 'input'],
          additionalProperties: false,
        },
        response: { 200: agentResultBody, ...errorResponses },
      },
    },
    async (request) => {
      const user = requireUser(request);
      const scenario = ctx.scenarios.get(request.body.scenarioId);
      return runAgent(scenario, request.body.input, {
        context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag, logger: ctx.logger },
        documentIds: request.body.options?.documentIds,
        userId: user.id,
      });
    },
  );
};
