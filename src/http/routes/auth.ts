import type { FastifyPluginAsync } from 'fastify';
import type { LoginCodeStore } from '../../core/auth/login-codes.js';
import type { MembershipStore } from '../../core/auth/membership.js';
import type { ProjectStore } from '../../core/auth/projects.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

export const authRoutes: FastifyPluginAsync<{ users: LoginCodeStore & ProjectStore & MembershipStore }> = async (app, { users }) => {
  app.post<{ Body: { code: string } }>(
    '/api/auth/login',
    {
      // Public by necessity: the one-time code in the body is the credential.
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a one-time sign-in code (from the link printed at first start) for a bearer token',
        ...routeSchema('POST /api/auth/login'),
      },
    },
    async (request) => users.exchangeLoginCode(request.body.code),
  );

  app.get(
    '/api/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user and the projects they belong to',
        ...routeSchema('GET /api/me'),
      },
    },
    async (request) => {
      const user = requireUser(request);
      return { ...user, projects: await users.projectIds(user.id) };
    },
  );

  // User and token management: routes/users.ts.

  app.get(
    '/api/projects',
    { schema: { tags: ['projects'], summary: 'Projects the caller belongs to (all, for admins)', ...routeSchema('GET /api/projects') } },
    async (request) => ({ projects: await users.listProjects(requireUser(request)) }),
  );

  app.post<{ Body: { id: string; name: string } }>(
    '/api/projects',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Create a project (trial) (admin)',
        ...routeSchema('POST /api/projects'),
      },
    },
    async (request, reply) => reply.status(201).send(await users.createProject(request.body, requireUser(request).name)),
  );

  app.post<{ Params: { id: string }; Body: { userId: string } }>(
    '/api/projects/:id/members',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Add a user to a project (admin)',
        ...routeSchema('POST /api/projects/:id/members'),
      },
    },
    async (request, reply) => {
      await users.addMember(request.params.id, request.body.userId, requireUser(request).name);
      return reply.status(204).send();
    },
  );
};
