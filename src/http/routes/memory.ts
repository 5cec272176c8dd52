import type { FastifyPluginAsync } from 'fastify';
import {
  routeSchema,
  type AddFactsRequest,
  type FeedbackRequest,
  type RegenerateReportRequest,
  type ReplaceMemoryRequest,
  type RollbackMemoryRequest,
  type UpdateProfileRequest,
} from '../../contract/index.js';
import type { ProjectMemory } from '../../memory/index.js';
import { requireUser } from '../access.js';

type Project = { Params: { projectId: string } };

/** Project memory (hot memory and its versions, weekly reports, answer feedback) and user profiles. Access is checked in src/memory. */
export const memoryRoutes: FastifyPluginAsync<{ memory: ProjectMemory }> = async (app, { memory }) => {
  const tags = ['memory'];
  app.get<Project>('/api/iit/projects/:projectId/memory', {
    schema: { tags, summary: "The project's hot memory: markdown, lines with their sources, tokens against the cap", ...routeSchema('GET /api/iit/projects/:projectId/memory') },
  }, async (request) => memory.hot.get(requireUser(request), request.params.projectId));

  app.put<Project & { Body: ReplaceMemoryRequest }>('/api/iit/projects/:projectId/memory', {
    config: { access: 'write' },
    schema: { tags, summary: 'Save the hot-memory editor: the whole markdown document (audited, versioned; over the token cap answers 422)', ...routeSchema('PUT /api/iit/projects/:projectId/memory') },
  }, async (request) => memory.hot.replace(requireUser(request), request.params.projectId, request.body));

  app.post<Project & { Body: AddFactsRequest }>('/api/iit/projects/:projectId/memory/facts', {
    config: { access: 'write' },
    schema: { tags, summary: 'Add facts to hot memory; a fact already there changes nothing', ...routeSchema('POST /api/iit/projects/:projectId/memory/facts') },
  }, async (request) => {
    const user = requireUser(request);
    const facts = request.body.facts.map((f) => ({ ...f, source: { kind: 'user' as const, ref: user.name } }));
    return memory.hot.addFacts(user, request.params.projectId, facts, 'api');
  });

  app.get<Project>('/api/iit/projects/:projectId/memory/versions', {
    schema: { tags, summary: 'Every version of the hot memory, newest first', ...routeSchema('GET /api/iit/projects/:projectId/memory/versions') },
  }, async (request) => ({ versions: await memory.hot.versions(requireUser(request), request.params.projectId) }));

  app.post<Project & { Body: RollbackMemoryRequest }>('/api/iit/projects/:projectId/memory/rollback', {
    config: { access: 'write' },
    schema: { tags, summary: 'Restore an earlier hot-memory version as a new version (audited)', ...routeSchema('POST /api/iit/projects/:projectId/memory/rollback') },
  }, async (request) => memory.hot.rollback(requireUser(request), request.params.projectId, request.body.version, request.body.reason));

  app.get<Project & { Querystring: { kind?: 'week' | 'year'; limit?: number } }>('/api/iit/projects/:projectId/reports', {
    schema: { tags, summary: 'Weekly reports and yearly summaries, newest first', ...routeSchema('GET /api/iit/projects/:projectId/reports') },
  }, async (request) => ({ reports: await memory.reports.list(requireUser(request), request.params.projectId, request.query) }));

  app.post<Project & { Body: RegenerateReportRequest }>('/api/iit/projects/:projectId/reports/regenerate', {
    config: { access: 'write' },
    schema: { tags, summary: "(Re)generate one week's report from that week's conversations; this week's Monday gives a report of the week so far (partial: true), which the weekly job replaces with the full report when the week ends. A week not yet started is refused. When the model fails (unavailable, or its answer unusable) nothing is stored and the answer is still 200: stored false, the report that stands, and a notice saying why.", ...routeSchema('POST /api/iit/projects/:projectId/reports/regenerate') },
  }, async (request) => memory.reports.regenerate(requireUser(request), request.params.projectId, request.body.weekStart));

  app.get<Project>('/api/iit/projects/:projectId/feedback', {
    schema: { tags, summary: "Ratings of the assistant's answers in this project", ...routeSchema('GET /api/iit/projects/:projectId/feedback') },
  }, async (request) => ({ feedback: await memory.feedback.list(requireUser(request), request.params.projectId) }));

  app.post<Project & { Body: FeedbackRequest }>('/api/iit/projects/:projectId/feedback', {
    config: { access: 'self' },
    schema: { tags, summary: 'Rate an answer (thumbs up or down, optional comment); the next distillation reads it', ...routeSchema('POST /api/iit/projects/:projectId/feedback') },
  }, async (request) => memory.feedback.record(requireUser(request), request.params.projectId, request.body));

  app.get('/api/profile', {
    schema: { tags, summary: 'How the assistant answers you: detail level, language, role title', ...routeSchema('GET /api/profile') },
  }, async (request) => {
    const user = requireUser(request);
    return memory.profiles.get(user, user.id);
  });

  app.put<{ Body: UpdateProfileRequest }>('/api/profile', {
    config: { access: 'self' },
    schema: { tags, summary: 'Change how the assistant answers you', ...routeSchema('PUT /api/profile') },
  }, async (request) => {
    const user = requireUser(request);
    return memory.profiles.put(user, user.id, request.body);
  });

  app.get<{ Params: { id: string } }>('/api/users/:id/profile', {
    config: { access: 'admin' },
    schema: { tags, summary: "A user's answer profile (admins)", ...routeSchema('GET /api/users/:id/profile') },
  }, async (request) => memory.profiles.get(requireUser(request), request.params.id));

  app.put<{ Params: { id: string }; Body: UpdateProfileRequest }>('/api/users/:id/profile', {
    config: { access: 'admin' },
    schema: { tags, summary: "Change a user's answer profile (admins; audited)", ...routeSchema('PUT /api/users/:id/profile') },
  }, async (request) => memory.profiles.put(requireUser(request), request.params.id, request.body));
};
