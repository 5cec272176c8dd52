import type { FastifyPluginAsync } from 'fastify';
import type { UserStore } from '../../core/auth/users.js';
import { requireUser } from '../access.js';
import { errorResponses, userBody } from '../schemas.js';

export const authRoutes: FastifyPluginAsync<{ users: UserStore }> = async (app, { users }) => {
  app.post<{ Body: { code: string } }>(
    '/api/auth/login',
    {
      // Public by necessity: the one-time code in the body is the credential.
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a one-time sign-in code (from the link printed at first start) for a bearer token',
        body: { type: 'object', properties: { code: { type: 'string', minLength: 1 } }, required: ['code'], additionalProperties: false },
        response: { 200: { type: 'object', properties: { token: { type: 'string' }, user: userBody } }, ...errorResponses },
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
        response: { 200: { type: 'object', properties: { ...userBody.properties, projects: { type: 'array', items: { type: 'string' } } } }, ...errorResponses },
      },
    },
    async (request) => {
      const user = requireUser(request);
      return { ...user, projects: await users.projectIds(user.id) };
    },
  );

  // User and token management: routes/users.ts.

  const projectBody = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } } as const;

  app.get(
    '/api/projects',
    { schema: { tags: ['projects'], summary: 'Projects the caller belongs to (all, for admins)', response: { 200: { type: 'object', properties: { projects: { type: 'array', items: projectBody } } }, ...errorResponses } } },
    async (request) => ({ projects: await users.listProjects(requireUser(request)) }),
  );

  app.post<{ Body: { id: string; name: string } }>(
    '/api/projects',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Create a project (trial) (admin)',
        body: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }, name: { type: 'string', minLength: 1 } }, required: ['id', 'name'], additionalProperties: false },
        response: { 201: projectBody, ...errorResponses },
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
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        body: { type: 'object', properties: { userId: { type: 'string', minLength: 1 } }, required: ['userId'], additionalProperties: false },
        response: { 204: { type: 'null' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await users.addMember(request.params.id, request.body.userId, requireUser(request).name);
      return reply.status(204).send();
    },
  );
};
