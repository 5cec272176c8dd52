import type { FastifyPluginAsync } from 'fastify';
import type { ConversationStore } from '../../runtime/conversations/index.js';
import { definitionIdOf, stateOf, type AgentRunService, type DefinitionRun } from '../../runtime/runs/agent-run-service.js';
import { routeSchema, type AgentRun, type AgentRunListQuery, type StartAgentRunRequest } from '../../contract/index.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';
import { servedScenario } from '../served-scenario.js';
import type { ScenarioSources } from '../../runtime/scenarios/resolve-scenario.js';

/** The run as the API shows it: never its messages (those are in its trace and conversation), only what a person acts on. */
function view(run: DefinitionRun): AgentRun {
  const request = run.status === 'SUSPENDED' ? (run.reviewRequest as { awaiting?: string; prompt?: string; action?: string; dataHash?: string } | null) : null;
  return {
    id: run.id,
    agent: definitionIdOf(run),
    userId: run.userId,
    projectId: run.projectId,
    conversationId: run.conversationId,
    status: run.status,
    waiting: request ? { awaiting: request.awaiting === 'answer' ? 'answer' : 'decision', prompt: request.prompt ?? '', action: request.action, dataHash: request.dataHash } : null,
    answer: stateOf(run).answer ?? null,
    error: run.error,
    recovering: run.recoveredAt !== null,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    completedAt: run.completedAt?.toISOString() ?? null,
  };
}

/** The list cursor: the createdAt and id of a page's last run, so runs created in the same millisecond are not skipped. */
const cursorOf = (run: DefinitionRun): string => `${run.createdAt.toISOString()}_${run.id}`;
function parseCursor(before: string | undefined): { createdAt: Date; id: string } | undefined {
  if (!before) return undefined;
  const [at, id] = before.split('_');
  const createdAt = new Date(at ?? '');
  if (!id || Number.isNaN(createdAt.getTime())) throw new ClinAgentError('VALIDATION_FAILED', 'before must be the nextBefore of the previous page.', { field: 'before' });
  return { createdAt, id };
}

/** Durable agent runs: a run belongs to the user who started it; anyone else gets 404 (admins may read any). */
export const agentRunRoutes: FastifyPluginAsync<{ agentRuns: AgentRunService; conversations: Pick<ConversationStore, 'assertMayContinue'>; scenarios: ScenarioSources }> = async (app, { agentRuns, conversations, scenarios }) => {
  app.post<{ Body: StartAgentRunRequest }>(
    '/api/agent/runs',
    { config: { access: 'write' }, schema: { tags: ['agent'], summary: 'Start a durable run of a scenario; 202 with the run, which workers advance. It may wait for your answer or approval', ...routeSchema('POST /api/agent/runs') } },
    async (request, reply) => {
      const user = requireUser(request);
      // Only a scenario starts here, as the other scenario routes refuse anything else: an invalid file answers 422,
      // an internal agent (a judge, a summary) an unknown scenario, before anything is stored.
      servedScenario(scenarios, request.body.scenarioId, user);
      if (request.body.conversationId) await conversations.assertMayContinue(request.body.conversationId, user, request.body.scenarioId);
      return reply.code(202).send(view(await agentRuns.start(user, request.body)));
    },
  );

  app.get<{ Querystring: AgentRunListQuery }>(
    '/api/agent/runs',
    { schema: { tags: ['agent'], summary: 'Your agent runs (admins: anyone\u2019s, or one user\u2019s), newest first; of one agent with agent=', ...routeSchema('GET /api/agent/runs') } },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const runs = await agentRuns.list(requireUser(request), { agent: request.query.agent, user: request.query.user, limit, before: parseCursor(request.query.before) });
      return { runs: runs.map(view), nextBefore: runs.length === limit ? cursorOf(runs.at(-1)!) : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/agent/runs/:id',
    { schema: { tags: ['agent'], summary: 'One agent run: its status, what it waits for, its answer', ...routeSchema('GET /api/agent/runs/:id') } },
    async (request) => view(await agentRuns.get(request.params.id, requireUser(request))),
  );

  app.post<{ Params: { id: string }; Body: { answer: string; dataHash?: string } }>(
    '/api/agent/runs/:id/answer',
    // An answer sets the agent to work again, as starting it did: a writer's act (a user demoted since is refused).
    { config: { access: 'write' }, schema: { tags: ['agent'], summary: 'Answer the question a run waits for; it goes on with your answer (409 if it no longer waits, or asks something else now)', ...routeSchema('POST /api/agent/runs/:id/answer') } },
    async (request) => view(await agentRuns.answer(request.params.id, requireUser(request), request.body.answer, request.body.dataHash)),
  );

  app.post<{ Params: { id: string }; Body: { decision: 'approve' | 'reject'; comment?: string; dataHash?: string } }>(
    '/api/agent/runs/:id/decision',
    { config: { access: 'write' }, schema: { tags: ['agent'], summary: 'Approve or reject what a run waits on; it goes on with your decision', ...routeSchema('POST /api/agent/runs/:id/decision') } },
    async (request) => view(await agentRuns.decide(request.params.id, requireUser(request), request.body.decision, request.body.comment, request.body.dataHash)),
  );

  app.post<{ Params: { id: string } }>(
    '/api/agent/runs/:id/retry',
    { config: { access: 'write' }, schema: { tags: ['agent'], summary: 'Retry a run that failed because the model was unavailable; it goes on from where it was, your answers kept (409 for any other run)', ...routeSchema('POST /api/agent/runs/:id/retry') } },
    async (request, reply) => reply.status(202).send(view(await agentRuns.retry(request.params.id, requireUser(request)))),
  );

  app.post<{ Params: { id: string } }>(
    '/api/agent/runs/:id/cancel',
    { config: { access: 'self' }, schema: { tags: ['agent'], summary: 'Cancel a run that has not ended; a step in progress is not saved', ...routeSchema('POST /api/agent/runs/:id/cancel') } },
    async (request) => view(await agentRuns.cancel(request.params.id, requireUser(request))),
  );
};
