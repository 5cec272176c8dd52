import type { FastifyPluginAsync } from 'fastify';
import { agentKind, agentsVisibleTo, type AgentDefinition, type AgentRegistry, type StartAccess } from '../../runtime/definitions/index.js';
import { routeSchema } from '../../contract/index.js';
import { INVESTIGATE_DEFINITION } from '../../investigate/index.js';
import { requireUser } from '../access.js';

/** The trial assistant's agent: asked through POST /api/iit/projects/:projectId/chat (routes/assistant.ts). */
const TRIAL_ASSISTANT_AGENT = INVESTIGATE_DEFINITION.id;

/**
 * The access of the route a person starts each agent through, as those routes declare it (config.access): a
 * scenario through POST /api/agent/run, its stream and POST /api/agent/runs, a staged agent through
 * POST /api/aia/protocol-agent/conversations, the consult through POST /api/consult/sessions, all `write`; the
 * trial assistant `self` (any signed-in member of the trial). Every other agent runs inside a feature.
 */
function startAccess(definition: AgentDefinition<any, any>): StartAccess {
  if (definition.id === TRIAL_ASSISTANT_AGENT) return 'self';
  const kind = agentKind(definition);
  return kind === 'scenario' || kind === 'staged' || kind === 'conversation' ? 'write' : undefined;
}

/** The one registry of agents, listed: what runs where, with which tools, answer schema and limits. */
export const agentListRoutes: FastifyPluginAsync<{ agents: Pick<AgentRegistry, 'list'> }> = async (app, { agents }) => {
  app.get(
    '/api/agents',
    {
      schema: {
        tags: ['agent'],
        summary: 'Every agent this server runs (admins), or those your role may start: id, kind, engine, tools, answer schema, limits',
        ...routeSchema('GET /api/agents'),
      },
    },
    async (request) => ({ agents: agentsVisibleTo(agents.list(), requireUser(request).role, startAccess) }),
  );
};
