import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';
import { routeSchema, type AgentRunRequest } from '../../contract/index.js';
import { requireUser } from '../access.js';
import { streamRun } from '../event-stream.js';
import { runOptionsFor, scenarioToRun } from './agent.js';

/** POST /api/agent/run/stream: one agent turn as server-sent events; the body is that of POST /api/agent/run. */
export const agentStreamRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post<{ Body: AgentRunRequest }>(
    '/api/agent/run/stream',
    {
      config: { access: 'write' },
      schema: {
        tags: ['agent'],
        summary: 'Run a scenario on one input and stream it: text as it is written, tool calls as they start and end, then the AgentResult',
        ...routeSchema('POST /api/agent/run/stream'),
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      // Refused before the stream opens, as JSON like the plain route's, never as a 200 followed by an error event.
      const scenario = await scenarioToRun(ctx, request.body, user);
      // The engine reports run-level failures in its result; an `error` event is a fault.
      await streamRun(reply, request, (onEvent, signal) => ctx.engines.run(scenario, request.body.input, { ...runOptionsFor(ctx, request.body, user), onEvent, signal }));
    },
  );
};
