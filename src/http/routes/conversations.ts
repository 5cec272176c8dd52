import type { FastifyPluginAsync } from 'fastify';
import type { ConversationStore } from '../../runtime/conversations/index.js';
import { routeSchema, type ConversationListQuery } from '../../contract/index.js';
import { requireUser } from '../access.js';

/** Conversations are started and continued by POST /api/agent/run; these routes read them back. */
export const conversationRoutes: FastifyPluginAsync<{ conversations: ConversationStore }> = async (app, { conversations }) => {
  app.get<{ Querystring: ConversationListQuery }>(
    '/api/conversations',
    {
      schema: {
        tags: ['conversations'],
        summary: 'Your agent conversations, most recently active first; optionally of one project or scenario',
        ...routeSchema('GET /api/conversations'),
      },
    },
    async (request) => ({ conversations: await conversations.list(requireUser(request), request.query) }),
  );

  app.get<{ Params: { id: string } }>(
    '/api/conversations/:id',
    {
      schema: {
        tags: ['conversations'],
        summary: 'One conversation with every turn (user, assistant, tool) in order. Yours, or any for admins; anyone else gets 404, as for a missing id',
        ...routeSchema('GET /api/conversations/:id'),
      },
    },
    async (request) => conversations.get(request.params.id, requireUser(request)),
  );
};
