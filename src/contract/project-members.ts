import { z } from 'zod';
import { IdText } from './common.js';
import { ROLES, Role } from './auth.js';

/** A member of a trial (GET /api/iit/projects/:projectId/members). */
export const ProjectMember = z.object({
  userId: z.string(),
  name: z.string(),
  role: Role.describe('platform-wide: the same in every trial the user belongs to'),
  canViewIdentifiers: z.boolean().describe("the admin's grant for this trial (PATCH /api/projects/:projectId/members/:userId)"),
  seesIdentifiers: z.boolean().describe('whether the member sees identifier fields unmasked: admins and PIs always do'),
  addedAt: z.string(),
  deactivatedAt: z.string().nullable(),
});
export type ProjectMember = z.infer<typeof ProjectMember>;
export const ProjectMemberList = z.object({ members: z.array(ProjectMember) });
export type ProjectMemberList = z.infer<typeof ProjectMemberList>;

/** POST /api/iit/projects/:projectId/members */
export const AddProjectMemberRequest = z.strictObject({
  userId: IdText,
  // Checked by the library, not the schema, so a wrong role is answered with the list of roles.
  role: z.string().max(40).optional().describe(`one of ${ROLES.join(', ')}; must be the user's role, which applies in every trial (change it with PATCH /api/users/:id)`),
});
export type AddProjectMemberRequest = z.infer<typeof AddProjectMemberRequest>;
