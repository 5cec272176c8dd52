import { and, asc, eq } from 'drizzle-orm';
import { appendAudit } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { projectMembers, projects, ROLES, users, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ROLES_SEEING_IDENTIFIERS } from './identifier-access.js';
import { createMembershipStore } from './membership.js';
import { findUser, iso, userNotFound } from './user-rows.js';
import type { User } from './users.js';

/** A member of a project as the members panel shows them. */
export interface ProjectMember {
  userId: string;
  name: string;
  /** Roles are platform-wide: a member has the same role in every project they belong to. */
  role: Role;
  /** The per-project grant an admin sets (PATCH /api/projects/:projectId/members/:userId). */
  canViewIdentifiers: boolean;
  /** What the member actually sees: admins and PIs always see identifier fields, whatever the grant. */
  seesIdentifiers: boolean;
  addedAt: string;
  deactivatedAt: string | null;
}

export interface ProjectMembers {
  /** The project's members, by name: admins, and the project's PIs (who need to know who sees their subjects). */
  list(actor: User, projectId: string): Promise<ProjectMember[]>;
  /** Adds a user (admin; audited). 404 unknown user, 409 already a member, 400 a role that is not one. */
  add(actor: User, projectId: string, input: { userId: string; role?: unknown }): Promise<ProjectMember>;
  /** Removes a member (admin; audited): their access to the project, identifier grant included, ends at once. */
  remove(actor: User, projectId: string, userId: string): Promise<void>;
}

/**
 * Who is on a trial, managed from the trial. Adding and removing members is for admins, as adding always was
 * (POST /api/projects/:id/members): membership opens a trial's subject data. A PI of the trial may read the list.
 */
export function createProjectMembers(db: Db): ProjectMembers {
  const membership = createMembershipStore(db);

  async function assertProjectExists(projectId: string): Promise<void> {
    const [project] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
    if (!project) throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist. Check the id (GET /api/projects).`, { projectId });
  }

  function assertAdmin(actor: User, what: string): void {
    if (actor.role !== 'admin') {
      throw new ClinAgentError('FORBIDDEN', `Only admins may ${what}; your role is "${actor.role}". Ask an admin.`, { role: actor.role, needs: ['admin'] });
    }
  }

  async function members(projectId: string, userId?: string): Promise<ProjectMember[]> {
    const where = userId ? and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)) : eq(projectMembers.projectId, projectId);
    const rows = await db
      .select({ userId: users.id, name: users.name, role: users.role, canViewIdentifiers: projectMembers.canViewIdentifiers, addedAt: projectMembers.addedAt, deactivatedAt: users.deactivatedAt })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(where)
      .orderBy(asc(users.name));
    return rows.map((row) => ({ ...row, seesIdentifiers: ROLES_SEEING_IDENTIFIERS.has(row.role) || row.canViewIdentifiers, addedAt: iso(row.addedAt)!, deactivatedAt: iso(row.deactivatedAt) }));
  }

  return {
    async list(actor, projectId) {
      // Anyone outside the project learns nothing of it, as for its data (core/auth/project-access.ts).
      if (actor.role !== 'admin' && !(await membership.isMember(projectId, actor))) {
        throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Ask a trial admin to add you.`, { projectId });
      }
      if (actor.role !== 'admin' && actor.role !== 'pi') {
        throw new ClinAgentError('FORBIDDEN', `Only admins and the trial's PI may list its members; your role is "${actor.role}". Ask the PI.`, { role: actor.role, needs: ['admin', 'pi'] });
      }
      await assertProjectExists(projectId);
      return members(projectId);
    },

    async add(actor, projectId, input) {
      assertAdmin(actor, 'add members to a trial');
      await assertProjectExists(projectId);
      const user = await findUser(db, input.userId);
      if (!user) throw userNotFound(input.userId);
      if (input.role !== undefined) assertRoleOf(user, input.role);
      if (!(await membership.addMember(projectId, user.id, actor.name))) {
        throw new ClinAgentError('CONFLICT_STATE', `${user.name} is already a member of project "${projectId}". Reload the members list; to change what they may see, toggle their identifier access instead.`, { projectId, userId: user.id });
      }
      const [member] = await members(projectId, user.id);
      return member!;
    },

    async remove(actor, projectId, userId) {
      assertAdmin(actor, 'remove members from a trial');
      await assertProjectExists(projectId);
      const notMember = () => new ClinAgentError('NOT_FOUND', `User "${userId}" is not a member of project "${projectId}". Check the id (GET /api/iit/projects/${projectId}/members).`, { projectId, userId });
      if (!isUuid(userId)) throw notMember();
      await db.transaction(async (txRaw) => {
        const tx = txRaw as unknown as Db;
        const [removed] = await tx
          .delete(projectMembers)
          .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)))
          .returning({ canViewIdentifiers: projectMembers.canViewIdentifiers });
        if (!removed) throw notMember();
        const user = await findUser(tx, userId);
        await appendAudit(tx, {
          projectId,
          entityType: 'member',
          entityId: userId,
          action: 'member.remove',
          actor: actor.name,
          oldValue: { userId, userName: user?.name ?? null, role: user?.role ?? null, canViewIdentifiers: removed.canViewIdentifiers },
        });
      });
    },
  };
}

/**
 * Roles are platform-wide in this release (users.role; no per-trial role is stored), so a role sent with a new
 * member must be the one the user has: silently changing it here would change it in every other trial too.
 */
function assertRoleOf(user: User, role: unknown): void {
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw new ClinAgentError('VALIDATION_FAILED', `role must be one of ${ROLES.join(', ')}; got ${JSON.stringify(role)}.`, { field: 'role', allowed: [...ROLES] });
  }
  if (role !== user.role) {
    throw new ClinAgentError(
      'CONFLICT_STATE',
      `${user.name} is a ${user.role}, not a ${role}: a role applies in every trial the user belongs to. Change it first (PATCH /api/users/${user.id} {"role": "${role}"}), or add them without a role.`,
      { field: 'role', role: user.role, requested: role },
    );
  }
}
