import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User, UserStore } from '../core/auth/users.js';
import { WRITER_ROLES } from '../core/auth/users.js';
import { ClinAgentError } from '../core/errors.js';

/**
 * Who may call a route. Trial data is sensitive, so the default for a route that declares nothing is
 * `read` (any signed-in user); only the health check and the sign-in-code exchange are public.
 */
export type Access = 'public' | 'read' | 'write' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    user?: User;
  }
}

export function requireUser(request: FastifyRequest): User {
  if (!request.user) throw new ClinAgentError('UNAUTHENTICATED', 'Sign in first: send the header Authorization: Bearer <token>.');
  return request.user;
}

export function accessHook(users: UserStore) {
  return async function checkAccess(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    // API routes default to `read`, so a route that forgets to declare access still needs a token. The
    // console's static files and the not-found handler carry no data and stay public.
    const isApiRoute = request.routeOptions.url?.startsWith('/api/') ?? false;
    const access: Access = request.routeOptions.config?.access ?? (isApiRoute ? 'read' : 'public');
    if (access === 'public') return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new ClinAgentError('UNAUTHENTICATED', header ? 'The Authorization header must be "Bearer <token>".' : 'This route needs a bearer token: send the header Authorization: Bearer <token>. An admin can create one (POST /api/users).');
    }
    const user = await users.findByToken(match[1]!);
    if (!user) throw new ClinAgentError('UNAUTHENTICATED', 'The bearer token is unknown or revoked. Sign in again or ask an admin for a new token.');
    request.user = user;
    if (access === 'write' && !WRITER_ROLES.has(user.role)) {
      throw new ClinAgentError('FORBIDDEN', `Your role "${user.role}" can only read. Ask an admin for the coordinator, PI or admin role to make changes.`, { role: user.role, needs: [...WRITER_ROLES] });
    }
    if (access === 'admin' && user.role !== 'admin') {
      throw new ClinAgentError('FORBIDDEN', `Only admins may do this; your role is "${user.role}". Ask an admin.`, { role: user.role, needs: ['admin'] });
    }
  };
}
