import type { FastifyPluginAsync } from 'fastify';
import type { EngineRunOptions } from '../../runtime/engines/index.js';
import type { Scenario } from '../../runtime/scenarios/load.js';
import { servedScenario } from '../served-scenario.js';
import type { User } from '../../core/auth/users.js';
import type { AppContext } from '../../context.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

interface RunBody {
  scenarioId: string;
  input: string;
  conversationId?: string;
  inputs?: Record<string, string | number | boolean>;
  options?: { documentIds?: string[] };
}

/** What both agent run routes (plain and streamed, routes/agent-stream.ts) pass to the scenario's engine for a body. */
export function runOptionsFor(ctx: AppContext, body: RunBody, user: User): EngineRunOptions {
  return {
    context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag, logger: ctx.logger },
    documentIds: body.options?.documentIds,
    inputs: body.inputs,
    userId: user.id,
    // Every turn is logged in a conversation: the one named, or a new one whose id the result carries.
    conversation: { store: ctx.conversations, actor: user, id: body.conversationId },
  };
}

/**
 * What can refuse a run before it starts, for both routes: an unknown scenario (404), a conversation that is not
 * the caller's (404), not theirs to continue (403) or another agent's (409), or an engine the server has not been
 * set up for (a Dify key variable that is unset: 409 naming it), or inputs the engine does not take (400). A
 * scenario whose file is invalid answers 422 (with its problems to admins). A streamed run is refused as JSON.
 */
export async function scenarioToRun(ctx: AppContext, body: RunBody, user: User): Promise<Scenario> {
  const scenario = servedScenario(ctx, body.scenarioId, user);
  if (body.conversationId) await ctx.conversations.assertMayContinue(body.conversationId, user, scenario.id);
  ctx.engines.assertReady(scenario, { inputs: body.inputs });
  return scenario;
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
      const scenario = await scenarioToRun(ctx, request.body, user);
      return ctx.engines.run(scenario, request.body.input, runOptionsFor(ctx, request.body, user));
    },
  );
};
