import type { FastifyPluginAsync } from 'fastify';
import type { TrialQc } from '../../trial/trial-qc.js';
import { requireUser } from '../access.js';
import { errorResponses } from '../schemas.js';

const memberAccessBody = {
  type: 'object',
  properties: { projectId: { type: 'string' }, userId: { type: 'string' }, canViewIdentifiers: { type: 'boolean' } },
  required: ['projectId', 'userId', 'canViewIdentifiers'],
} as const;

/** Per-project rights of a member that an admin grants: for now, seeing identifier fields unmasked. */
export const projectMemberRoutes: FastifyPluginAsync<{ qc: TrialQc }> = async (app, { qc }) => {
  app.patch<{ Params: { projectId: string; userId: string }; Body: { canViewIdentifiers: boolean } }>(
    '/api/projects/:projectId/members/:userId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['projects'],
        summary: 'Let a coordinator or viewer of this project see identifier fields (names, phone, address, birth date) unmasked, or take it back (admin; audited). Admins and PIs always see them.',
        params: { type: 'object', properties: { projectId: { type: 'string' }, userId: { type: 'string' } }, required: ['projectId', 'userId'] },
        body: { type: 'object', properties: { canViewIdentifiers: { type: 'boolean' } }, required: ['canViewIdentifiers'], additionalProperties: false },
        response: { 200: memberAccessBody, ...errorResponses },
      },
    },
    async (request) => qc.setIdentifierAccess(request.params.projectId, request.params.userId, request.body.canViewIdentifiers, requireUser(request)),
  );
};
