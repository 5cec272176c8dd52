import type { FastifyPluginAsync } from 'fastify';
import { runAgent } from '../../agent/run-agent.js';
import type { AppContext } from '../../context.js';
import { routeSchema, type AgentRunRequest } from '../../contract/index.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';
import { openEventStream } from '../event-stream.js';
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
      const stream = openEventStream(reply);
      try {
        const result = await runAgent(scenario, request.body.input, {
          ...runOptionsFor(ctx, request.body, user),
          onEvent: (event) => stream.send(event.type, event),
          signal: stream.signal,
        });
        stream.send('result', result);
      } catch (error) {
        // runAgent reports run-level failures in its result; reaching here is a fault, whose text stays in the log.
        request.log.error({ err: error }, 'streamed agent run failed');
        const body = ClinAgentError.isInstance(error) ? error.toJSON() : { code: 'INTERNAL', message: `Internal error. The server log has the details under request id ${request.id}.`, details: { requestId: request.id } };
        stream.send('error', body);
      } finally {
        stream.end();
      }
    },
  );
};
