import type { FastifyPluginAsync } from 'fastify';
import { runAgent, type RunAgentOptions } from '../../agent/run-agent.js';
import type { User } from '../../core/auth/users.js';
import type { AppContext } from '../../context.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

interface RunBody {
  scenarioId: string;
  input: string;
  conversationId?: string;
  options?: { documentIds?: string[] };
}

/** What both agent run routes (plain and streamed, routes/agent-stream.ts) pass to runAgent for a body. */
export function runOptionsFor(ctx: AppContext, body: RunBody, user: User): RunAgentOptions {
  return {
    context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag, logger: ctx.logger },
    documentIds: body.options?.documentIds,
    userId: user.id,
    // Every turn is logged in a conversation: the one named, or a new one whose id the result carries.
    conversation: { store: ctx.conversations, actor: user, id: body.conversationId },
  };
}

export const agentRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post<{ Body: RunBody }>(
    '/api/agent/run',
    {
      config: { access: 'write' },
      schema: {
        tags: ['agent'],
        summary: 'Run a scenario on one input; returns an AgentResult (status "failed" with an error when the run could not complete)',
        ...routeSchema('POST /api/agent/run'),
      },
    },
    async (request) => {
      const user = requireUser(request);
      const scenario = ctx.scenarios.get(request.body.scenarioId);
      return runAgent(scenario, request.body.input, runOptionsFor(ctx, request.body, user));
    },
  );
};
