import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import { ClinAgentError } from '../../core/errors.js';
import type { LoginCodeStore } from '../../core/auth/login-codes.js';
import type { MembershipStore } from '../../core/auth/membership.js';
import type { ProjectStore } from '../../core/auth/projects.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

export const authRoutes: FastifyPluginAsync<{ users: LoginCodeStore & ProjectStore & MembershipStore; signIn: { maxAttempts: number; windowMs: number } }> = async (
  app,
  { users, signIn },
) => {
  // Only the routes that ask for it (this plugin's scope): sign-in codes are the one credential anyone may try.
  await app.register(fastifyRateLimit, { global: false });

  app.post<{ Body: { code: string } }>(
    '/api/auth/login',
    {
      // Public by necessity: the one-time code in the body is the credential. Attempts are counted per client
      // address (request.ip, behind a proxy only with Fastify's trustProxy), so guessing codes gets 429s that
      // say when to try again; a code is 256 random bits, the limit keeps even trying cheap for nobody.
      config: {
        access: 'public',
        rateLimit: {
          max: signIn.maxAttempts,
          timeWindow: signIn.windowMs,
          errorResponseBuilder: (_request, context) => tooManyAttempts(context.ttl, signIn),
        },
      },
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

/** The 429 a client gets past the limit: how long to wait, and when, so a person (or a script) knows what to do. */
function tooManyAttempts(ttlMs: number, signIn: { maxAttempts: number; windowMs: number }): ClinAgentError {
  const retryAfterSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  const retryAt = new Date(Date.now() + retryAfterSeconds * 1000).toISOString();
  // @fastify/rate-limit throws what this returns (with a Retry-After header); the error handler answers it.
  return new ClinAgentError(
    'TOO_MANY_ATTEMPTS',
    `Too many sign-in attempts from this address (more than ${signIn.maxAttempts} in ${Math.round(signIn.windowMs / 1000)} s). Try again in ${retryAfterSeconds} s (after ${retryAt}); if your link does not work then, ask an admin for a new one.`,
    { retryAfterSeconds, retryAt },
  );
}
