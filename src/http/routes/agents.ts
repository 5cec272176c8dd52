import type { FastifyPluginAsync } from 'fastify';
import { agentsVisibleTo, type AgentRegistry } from '../../runtime/definitions/index.js';
import { routeSchema } from '../../contract/index.js';
import { requireUser } from '../access.js';

/** The one registry of agents, listed: what runs where, with which tools, answer schema and limits. */
export const agentListRoutes: FastifyPluginAsync<{ agents: Pick<AgentRegistry, 'list'> }> = async (app, { agents }) => {
  app.get(
    '/api/agents',
    {
      schema: {
        tags: ['agent'],
        summary: 'Every agent this server runs (admins), or those you can start: id, kind, engine, tools, answer schema, limits',
        ...routeSchema('GET /api/agents'),
      },
    },
    async (request) => ({ agents: agentsVisibleTo(agents.list(), requireUser(request).role) }),
  );
};
