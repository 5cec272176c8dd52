import type { FastifyPluginAsync } from 'fastify';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { routeSchema } from '../../contract/index.js';

/** Per-project rights of a member that an admin grants: for now, seeing identifier fields unmasked. */
export const projectMemberRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.patch<{ Params: { projectId: string; userId: string }; Body: { canViewIdentifiers: boolean } }>(
    '/api/projects/:projectId/members/:userId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Let a coordinator or viewer of this project see identifier fields (names, phone, address, birth date) unmasked, or take it back (admin; audited). Admins and PIs always see them.',
        ...routeSchema('PATCH /api/projects/:projectId/members/:userId'),
      },
    },
    async (request) => qc.setIdentifierAccess(requireUser(request), request.params.projectId, request.params.userId, request.body.canViewIdentifiers),
  );
};
