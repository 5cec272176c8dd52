import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { MembershipStore } from '../../core/auth/membership.js';
import { ClinAgentError } from '../../core/errors.js';
import { adminReader, type TraceReader, type TraceStore } from '../../core/trace/store.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

export const traceRoutes: FastifyPluginAsync<{ trace: TraceStore; users: MembershipStore }> = async (app, { trace, users }) => {
  /**
   * Admins read every trace (another user's consult or protocol conversation as timings, tokens and status only);
   * anyone else their own runs and the runs over their projects that are not someone's private conversation.
   */
  async function readerOf(request: FastifyRequest): Promise<TraceReader> {
    const user = requireUser(request);
    return user.role === 'admin' ? adminReader(user.id) : { userId: user.id, projectIds: await users.projectIds(user.id) };
  }

  app.get<{ Querystring: { limit?: number } }>(
    '/api/traces',
    {
      schema: {
        tags: ['traces'],
        summary: 'Most recent traces first: your own agent runs and runs over your projects (all, for admins)',
        ...routeSchema('GET /api/traces'),
      },
    },
    async (request) => ({ traces: await trace.list(await readerOf(request), { limit: request.query.limit }) }),
  );

  app.get<{ Params: { id: string } }>(
    '/api/traces/:id',
    {
      schema: {
        tags: ['traces'],
        summary: 'One trace: the run, its LLM calls, tool calls and retrievals with timing and token usage',
        ...routeSchema('GET /api/traces/:id'),
      },
    },
    async (request) => {
      const found = await trace.get(request.params.id, await readerOf(request));
      // A trace the caller may not read answers exactly like a missing one, so ids reveal nothing.
      if (!found) throw new ClinAgentError('NOT_FOUND', `Trace "${request.params.id}" does not exist or is not yours to read. Trace ids come back as traceId in every agent result; you can read your own runs and runs over your projects.`, { traceId: request.params.id });
      return found;
    },
  );
};
