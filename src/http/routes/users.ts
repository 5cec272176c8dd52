import type { FastifyPluginAsync } from 'fastify';
import type { UserStore } from '../../core/auth/users.js';
import { ROLES, type Role } from '../../core/db/schema/auth.js';
import { requireUser } from '../access.js';
import { errorResponses, userBody, uuidParams } from '../schemas.js';

const userSummaryBody = {
  type: 'object',
  properties: { ...userBody.properties, createdAt: { type: 'string' }, deactivatedAt: { type: ['string', 'null'], description: 'set while the user is deactivated; their tokens answer 401' } },
  required: ['id', 'name', 'role', 'deactivatedAt'],
} as const;

const tokenBody = {
  type: 'object',
  description: 'A token as its owner and admins see it: never the token itself or its hash',
  properties: {
    id: { type: 'string' },
    userId: { type: 'string' },
    label: { type: 'string' },
    createdAt: { type: 'string' },
    lastUsedAt: { type: ['string', 'null'], description: 'updated at most once a minute' },
    expiresAt: { type: ['string', 'null'], description: 'null: never expires (CLINAGENT_ADMIN_TOKEN)' },
    revokedAt: { type: ['string', 'null'] },
    current: { type: 'boolean', description: 'true for the token this request was sent with' },
  },
  required: ['id', 'userId', 'label', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt'],
} as const;

/** Users (admin), their roles and activation, and tokens: listed and revoked by their owner or an admin. */
export const userRoutes: FastifyPluginAsync<{ users: UserStore }> = async (app, { users }) => {
  app.get(
    '/api/users',
    { config: { access: 'admin' }, schema: { tags: ['auth'], summary: 'List users (admin)', response: { 200: { type: 'object', properties: { users: { type: 'array', items: userSummaryBody } } }, ...errorResponses } } },
    async () => ({ users: await users.list() }),
  );

  app.post<{ Body: { name: string; role: Role } }>(
    '/api/users',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Create a user with a role (admin); returns their first token, shown only once',
        body: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, role: { type: 'string', enum: [...ROLES] } }, required: ['name', 'role'], additionalProperties: false },
        response: { 201: { type: 'object', properties: { user: userBody, token: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await users.create(request.body, requireUser(request).name)),
  );

  app.patch<{ Params: { id: string }; Body: { role: Role } }>(
    '/api/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: "Change a user's role (admin). The last active admin cannot be demoted (409).",
        params: uuidParams('id'),
        body: { type: 'object', properties: { role: { type: 'string', enum: [...ROLES] } }, required: ['role'], additionalProperties: false },
        response: { 200: userSummaryBody, ...errorResponses },
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
        params: uuidParams('id'),
        response: { 200: userSummaryBody, ...errorResponses },
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
        params: uuidParams('id'),
        response: { 200: userSummaryBody, ...errorResponses },
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
        params: uuidParams('id'),
        body: { type: ['object', 'null'], properties: { label: { type: 'string', maxLength: 100 } }, additionalProperties: false },
        response: { 201: { type: 'object', properties: { token: { type: 'string' }, id: { type: 'string' }, expiresAt: { type: ['string', 'null'] } } }, ...errorResponses },
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
        params: uuidParams('id'),
        response: { 200: { type: 'object', properties: { tokens: { type: 'array', items: tokenBody } } }, ...errorResponses },
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
        params: uuidParams('id'),
        response: { 200: tokenBody, ...errorResponses },
      },
    },
    async (request) => users.revokeToken(request.params.id, requireUser(request)),
  );
};
