import { z } from 'zod';
import { IdText, NameText } from './common.js';

/** Roles in the order of what they may do; the same list as core/db/schema/auth.ts ROLES. */
export const ROLES = ['admin', 'pi', 'data_manager', 'coordinator', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;
/** A member's role in one trial (admin is platform-wide only); the same list as core/db/schema/auth.ts PROJECT_ROLES. */
export const PROJECT_ROLES = ['pi', 'data_manager', 'coordinator', 'viewer'] as const;
export const ProjectRole = z.enum(PROJECT_ROLES);
export type ProjectRole = z.infer<typeof ProjectRole>;

export const User = z.object({ id: z.string(), name: z.string(), role: Role });
export type User = z.infer<typeof User>;

/** GET /api/me */
export const Me = User.extend({ projects: z.array(z.string()).describe('ids of the projects the user belongs to') });
export type Me = z.infer<typeof Me>;

/** POST /api/auth/login */
export const LoginRequest = z.strictObject({ code: NameText.min(1).describe('the one-time sign-in code from the link') });
export type LoginRequest = z.infer<typeof LoginRequest>;
export const LoginResponse = z.object({ token: z.string(), user: User });
export type LoginResponse = z.infer<typeof LoginResponse>;

/** A user as admins manage them (GET /api/users). */
export const ManagedUser = User.extend({
  createdAt: z.string(),
  deactivatedAt: z.string().nullable().describe('set while the user is deactivated; their tokens answer 401'),
});
export type ManagedUser = z.infer<typeof ManagedUser>;
export const UserList = z.object({ users: z.array(ManagedUser) });

/** POST /api/users */
export const CreateUserRequest = z.strictObject({ name: z.string().min(1).max(100), role: Role });
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;
/** A one-time sign-in link for a user: what an admin passes on instead of a bearer token. */
export const SignInLinkResponse = z.object({
  user: User,
  signInLink: z.string().describe('opens the console and signs the user in once; the user then holds their own token, which the admin never sees'),
  expiresAt: z.string().describe('the link stops working then, or once used'),
});
export type SignInLinkResponse = z.infer<typeof SignInLinkResponse>;
export const CreateUserResponse = SignInLinkResponse;
export type CreateUserResponse = SignInLinkResponse;

/** PATCH /api/users/:id */
export const SetRoleRequest = z.strictObject({ role: Role });

/** A token as its owner and admins see it: never the token itself or its hash. */
export const AccountToken = z
  .object({
    id: z.string(),
    userId: z.string(),
    label: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable().describe('updated at most once a minute'),
    expiresAt: z.string().nullable().describe('null: never expires (CLINAGENT_ADMIN_TOKEN)'),
    revokedAt: z.string().nullable(),
    current: z.boolean().optional().describe('true for the token this request was sent with'),
  })
  .describe('A token as its owner and admins see it: never the token itself or its hash');
export type AccountToken = z.infer<typeof AccountToken>;
export const TokenList = z.object({ tokens: z.array(AccountToken) });

/** POST /api/users/:id/tokens: the body may be absent or null. */
export const IssueTokenRequest = z.strictObject({ label: z.string().max(100).optional() }).nullable();
export const IssueTokenResponse = z.object({ token: z.string().describe('shown only once'), id: z.string(), expiresAt: z.string().nullable() });
export type IssueTokenResponse = z.infer<typeof IssueTokenResponse>;

export const Project = z.object({ id: z.string(), name: z.string() });
export type Project = z.infer<typeof Project>;
export const ProjectList = z.object({ projects: z.array(Project) });

/** POST /api/projects */
export const CreateProjectRequest = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
  name: NameText.min(1),
});
export type CreateProjectRequest = z.infer<typeof CreateProjectRequest>;

/** POST /api/projects/:id/members */
export const AddMemberRequest = z.strictObject({ userId: IdText });

/** PATCH /api/projects/:projectId/members/:userId */
export const SetMemberAccessRequest = z
  .strictObject({
    canViewIdentifiers: z.boolean().optional(),
    // Checked by the library, not the schema, so a wrong role is answered with the roles a trial takes.
    role: z.string().max(40).nullable().optional().describe(`the member's role in this trial: ${PROJECT_ROLES.join(', ')}; null lets their platform role apply again`),
  })
  .refine((body) => body.canViewIdentifiers !== undefined || body.role !== undefined, { message: 'send canViewIdentifiers (true or false), role, or both' });
export const MemberAccess = z.object({
  projectId: z.string(),
  userId: z.string(),
  canViewIdentifiers: z.boolean(),
  role: Role.describe('the role the member has in this trial'),
  projectRole: ProjectRole.nullable().describe('the role set for this trial only; null: their platform role applies'),
});
export type MemberAccess = z.infer<typeof MemberAccess>;
