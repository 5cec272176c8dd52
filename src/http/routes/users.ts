import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TokenStore } from '../../core/auth/api-tokens.js';
import type { UserStore } from '../../core/auth/users.js';
import type { Role } from '../../core/db/schema/auth.js';
import { signInPath } from '../../core/auth/login-codes.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/** Users (admin), their roles and activation, and tokens: listed and revoked by their owner or an admin. */
export const userRoutes: FastifyPluginAsync<{ users: UserStore & TokenStore }> = async (app, { users }) => {
  app.get(
    '/api/users',
    { config: { access: 'admin' }, schema: { tags: ['auth'], summary: 'List users (admin)', ...routeSchema('GET /api/users') } },
    async () => ({ users: await users.list() }),
  );

  app.post<{ Body: { name: string; role: Role } }>(
    '/api/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Create a user with a role (admin); returns a one-time sign-in link for them (it works once and expires), never a token',
        ...routeSchema('POST /api/users'),
      },
    },
    async (request, reply) => {
      const { user, loginCode, expiresAt } = await users.invite(request.body, requireUser(request).name);
      return reply.status(201).send({ user, signInLink: linkFor(request, loginCode), expiresAt });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/users/:id/sign-in-link',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'A new one-time sign-in link for a user (admin): when the first expired or was lost; works once and expires',
        ...routeSchema('POST /api/users/:id/sign-in-link'),
      },
    },
    async (request, reply) => {
      const { user, loginCode, expiresAt } = await users.issueSignInCode(request.params.id, requireUser(request));
      return reply.status(201).send({ user, signInLink: linkFor(request, loginCode), expiresAt });
    },
  );

  app.patch<{ Params: { id: string }; Body: { role: Role } }>(
    '/api/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: "Change a user's role (admin). The last active admin cannot be demoted (409).",
        ...routeSchema('PATCH /api/users/:id'),
      },
    },
    async (request) => users.setRole(request.params.id, request.body.role, requireUser(request)),
  );

  app.post<{ Params: { id: string } }>(
    '/api/users/:id/deactivate',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: "Deactivate a user (admin): their tokens answer 401 at once. The last active admin cannot be deactivated (409).",
        ...routeSchema('POST /api/users/:id/deactivate'),
      },
    },
    async (request) => users.deactivate(request.params.id, requireUser(request)),
  );

  app.post<{ Params: { id: string } }>(
    '/api/users/:id/reactivate',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Reactivate a user (admin): their tokens that have not expired or been revoked work again',
        ...routeSchema('POST /api/users/:id/reactivate'),
      },
    },
    async (request) => users.reactivate(request.params.id, requireUser(request)),
  );

  app.post<{ Params: { id: string }; Body: { label?: string } | undefined }>(
    '/api/users/:id/tokens',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Issue another token for a user (admin); the token is shown only once and expires after TOKEN_TTL_DAYS days',
        ...routeSchema('POST /api/users/:id/tokens'),
      },
    },
    async (request, reply) => {
      const { token, info } = await users.issueToken(request.params.id, { label: request.body?.label || 'issued by admin', actor: requireUser(request).name });
      return reply.status(201).send({ token, id: info.id, expiresAt: info.expiresAt });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/users/:id/tokens',
    {
      schema: {
        tags: ['auth'],
        summary: "A user's tokens, newest first, without the tokens themselves: your own, or anyone's for admins",
        ...routeSchema('GET /api/users/:id/tokens'),
      },
    },
    async (request) => ({ tokens: (await users.listTokens(request.params.id, requireUser(request))).map((token) => ({ ...token, current: token.id === request.tokenId })) }),
  );

  app.post<{ Params: { id: string } }>(
    '/api/tokens/:id/revoke',
    {
      // Anyone signed in, viewers included, may revoke their own token (a leaked one must be stoppable by its
      // owner); the store answers 404 for someone else's unless the caller is an admin.
      config: { access: 'self' },
      schema: {
        tags: ['auth'],
        summary: 'Revoke a token at once: your own, or any token for admins',
        ...routeSchema('POST /api/tokens/:id/revoke'),
      },
    },
    async (request) => users.revokeToken(request.params.id, requireUser(request)),
  );
};

/**
 * The link on the console's address as the admin's browser reached it, so it opens the same console for the user:
 * the Origin the browser sends with every POST, else the protocol and host the request came in on. Behind a proxy
 * that ends TLS the latter says http (request.protocol knows better only with TRUST_PROXY), and a link starting
 * http:// would send the code readable over the network once.
 */
function linkFor(request: FastifyRequest, code: string): string {
  const origin = request.headers.origin;
  const base = origin && /^https?:\/\/[^/\s]+$/i.test(origin) ? origin : `${request.protocol}://${request.host}`;
  return `${base}${signInPath(code)}`;
}
