import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authentication, TokenAuthenticator } from '../core/auth/authenticate.js';
import type { MembershipCheck } from '../core/auth/membership.js';
import { WRITER_ROLES, type User } from '../core/auth/users.js';
import { assertWriterRole } from '../core/auth/project-access.js';
import { ClinAgentError } from '../core/errors.js';

/**
 * Who may call a route. Trial data is sensitive, so the default for a route that declares nothing is
 * `read` (any signed-in user); only the health check and the sign-in-code exchange are public. `self` is
 * any signed-in user, viewers included, changing only their own things: revoking their own token, their answer
 * profile, rating an answer, asking the trial assistant (which writes nothing but their own conversation); the
 * library behind such a route refuses anyone else's and any change to project data.
 */
type Access = 'public' | 'read' | 'self' | 'write' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    user?: User;
    /** The id of the token the request came with, so a token list can mark "this browser's" token. */
    tokenId?: string;
  }
}

export function requireUser(request: FastifyRequest): User {
  if (!request.user) throw new ClinAgentError('UNAUTHENTICATED', 'Sign in first: send the header Authorization: Bearer <token>.');
  return request.user;
}

export function accessHook(users: TokenAuthenticator & Pick<MembershipCheck, 'roleIn' | 'writesInSomeProject'>) {
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
    const auth = await users.authenticate(match[1]!);
    if (!auth.ok) throw refusal(auth);
    const { user } = auth;
    request.user = user;
    request.tokenId = auth.tokenId;
    if (access === 'write' && !WRITER_ROLES.has(user.role) && !(await writesInTrialOf(users, request, user))) assertWriterRole(user);
    if (access === 'admin' && user.role !== 'admin') {
      throw new ClinAgentError('FORBIDDEN', `Only admins may do this; your role is "${user.role}". Ask an admin.`, { role: user.role, needs: ['admin'] });
    }
  };
}

/**
 * A platform viewer may be a coordinator or PI in some trials (project_members.role). A trial route lets them by
 * their role in the route's project, or, for one naming a run or a skill, by a writer role in any trial: the library
 * then checks the role in the project the run or skill belongs to (assertProjectWriter, assertCanEditSkill). The
 * platform's own agents (runs, protocol, consult) go by the platform role.
 */
async function writesInTrialOf(users: Pick<MembershipCheck, 'roleIn' | 'writesInSomeProject'>, request: FastifyRequest, user: User): Promise<boolean> {
  if (!request.routeOptions.url?.startsWith('/api/iit/')) return false;
  const { projectId } = (request.params ?? {}) as { projectId?: unknown };
  return typeof projectId === 'string' ? WRITER_ROLES.has((await users.roleIn(projectId, user)) ?? user.role) : users.writesInSomeProject(user);
}

const NEW_TOKEN = 'Get a new one: ask an admin for a new sign-in link (Users page, "New sign-in link": POST /api/users/:id/sign-in-link; for the first admin, `clinagent login-link`).';

/** Each refused token says why and what to do; `details.reason` lets the console word it in its own language. */
function refusal(auth: Extract<Authentication, { ok: false }>): ClinAgentError {
  switch (auth.reason) {
    case 'expired':
      return new ClinAgentError('UNAUTHENTICATED', `This token expired at ${auth.at}. ${NEW_TOKEN}`, { reason: 'expired', expiredAt: auth.at });
    case 'revoked':
      return new ClinAgentError('UNAUTHENTICATED', `This token was revoked at ${auth.at}. ${NEW_TOKEN}`, { reason: 'revoked', revokedAt: auth.at });
    case 'deactivated':
      return new ClinAgentError('UNAUTHENTICATED', 'Your account is deactivated, so its tokens no longer work. Ask an admin to reactivate it (POST /api/users/:id/reactivate).', { reason: 'deactivated' });
    default:
      return new ClinAgentError('UNAUTHENTICATED', `The bearer token is unknown. Check that it was copied whole. ${NEW_TOKEN}`, { reason: 'unknown' });
  }
}
