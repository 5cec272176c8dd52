import type { FastifyPluginAsync } from 'fastify';
import type { TrialAssistant } from '../../chat/index.js';
import { routeSchema, type ChatRequest } from '../../contract/index.js';
import { requireUser } from '../access.js';
import { streamRun } from '../event-stream.js';

type ChatRoute = { Params: { projectId: string }; Body: ChatRequest };

/** The trial assistant: a question in, the final answer out (as JSON, or as server-sent events while it works). */
export const assistantRoutes: FastifyPluginAsync<{ assistant: TrialAssistant }> = async (app, { assistant }) => {
  const summary =
    'Ask the trial assistant (Chinese or English). The message is split into intents answered in order: data, protocol and history questions through read-only tools, QC tasks started on the SOP engine (writers), preferences remembered in hot memory, change requests guided to the QC flow. Only the final answer is returned; the full trace is for admins.';

  app.post<ChatRoute>('/api/iit/projects/:projectId/chat', {
    config: { access: 'self' },
    schema: { tags: ['assistant'], summary, ...routeSchema('POST /api/iit/projects/:projectId/chat') },
  }, async (request) => assistant.chat(requireUser(request), request.params.projectId, request.body));

  app.post<ChatRoute>('/api/iit/projects/:projectId/chat/stream', {
    config: { access: 'self' },
    schema: { tags: ['assistant'], summary: `${summary} Streamed as server-sent events.`, ...routeSchema('POST /api/iit/projects/:projectId/chat/stream') },
  }, async (request, reply) => {
    const user = requireUser(request);
    // Refusals (not a member, empty message, someone else's conversation) answer as plain 4xx, before the stream.
    await assistant.checkQuestion(user, request.params.projectId, request.body);
    await streamRun(reply, request, (onEvent, signal) => assistant.chat(user, request.params.projectId, request.body, { onEvent, signal }));
  });
};
