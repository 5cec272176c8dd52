import type { FastifyPluginAsync } from 'fastify';
import type { ProjectMembers } from '../../core/auth/project-members.js';
import type { RecordService } from '../../trial/records/record-service.js';
import { ClinAgentError } from '../../core/errors.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/**
 * Who is on a trial and what they may see: the members panel's routes. Adding and removing members is for admins
 * (the library checks it; a PI may list them); a member's identifier access an admin grants.
 */
export const projectMemberRoutes: FastifyPluginAsync<{ identifiers: Pick<RecordService, 'setIdentifierAccess'>; members: ProjectMembers }> = async (app, { identifiers, members }) => {
  app.get<{ Params: { projectId: string } }>(
    '/api/iit/projects/:projectId/members',
    {
      schema: {
        tags: ['projects'],
        summary: "The trial's members with their role and whether they see identifier fields (admins, and the trial's PI)",
        ...routeSchema('GET /api/iit/projects/:projectId/members'),
      },
    },
    async (request) => ({ members: await members.list(requireUser(request), request.params.projectId) }),
  );

  app.post<{ Params: { projectId: string }; Body: { userId: string; role?: string } }>(
    '/api/iit/projects/:projectId/members',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Add a user to the trial (admin; audited). 404 unknown user, 409 already a member or a role other than the user\'s (roles apply in every trial).',
        ...routeSchema('POST /api/iit/projects/:projectId/members'),
      },
    },
    async (request, reply) => reply.status(201).send(await members.add(requireUser(request), request.params.projectId, request.body)),
  );

  app.delete<{ Params: { projectId: string; userId: string } }>(
    '/api/iit/projects/:projectId/members/:userId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Remove a member from the trial (admin; audited): their access, identifier grant included, ends at once',
        ...routeSchema('DELETE /api/iit/projects/:projectId/members/:userId'),
      },
    },
    async (request, reply) => {
      await members.remove(requireUser(request), request.params.projectId, request.params.userId);
      return reply.status(204).send();
    },
  );

  app.patch<{ Params: { projectId: string; userId: string }; Body: { canViewIdentifiers?: boolean; role?: string | null } }>(
    '/api/projects/:projectId/members/:userId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary:
          "Set a member's role in this trial (pi, coordinator, viewer; null: their platform role), and let a coordinator or viewer see identifier fields (names, phone, address, birth date) unmasked or take it back (admin; each change audited). Admins and PIs always see them.",
        ...routeSchema('PATCH /api/projects/:projectId/members/:userId'),
      },
    },
    async (request) => {
      const actor = requireUser(request);
      const { projectId, userId } = request.params;
      const { role, canViewIdentifiers } = request.body;
      if (role === undefined && canViewIdentifiers === undefined) {
        throw new ClinAgentError('VALIDATION_FAILED', 'Send "role" (pi, coordinator or viewer in this trial; null for the platform role), "canViewIdentifiers" (true or false), or both.', { fields: ['role', 'canViewIdentifiers'] });
      }
      if (role !== undefined) await members.setRole(actor, projectId, userId, role);
      if (canViewIdentifiers !== undefined) await identifiers.setIdentifierAccess(actor, projectId, userId, canViewIdentifiers);
      const member = await members.get(actor, projectId, userId);
      return { projectId, userId, canViewIdentifiers: member.canViewIdentifiers, role: member.role, projectRole: member.projectRole };
    },
  );
};
