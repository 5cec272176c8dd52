import { z } from 'zod';
import { IdText } from './common.js';
import { PROJECT_ROLES, ProjectRole, Role } from './auth.js';

/** A member of a trial (GET /api/iit/projects/:projectId/members). */
export const ProjectMember = z.object({
  userId: z.string(),
  name: z.string(),
  role: Role.describe('the role the member has in this trial: projectRole if set, else platformRole'),
  platformRole: Role.describe("the user's role on the platform, which applies in every trial without a role of its own"),
  projectRole: ProjectRole.nullable().describe('the role set for this trial only (PATCH /api/projects/:projectId/members/:userId {role}); null: the platform role applies'),
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
  role: z.string().max(40).optional().describe(`the member's role in this trial, one of ${PROJECT_ROLES.join(', ')}; omitted: their platform role applies`),
});
export type AddProjectMemberRequest = z.infer<typeof AddProjectMemberRequest>;
