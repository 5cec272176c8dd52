import { and, asc, eq } from 'drizzle-orm';
import { appendAudit } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { PROJECT_ROLES, projectMembers, projects, users, type ProjectRole, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ROLES_SEEING_IDENTIFIERS } from './identifier-access.js';
import { assertProjectRole } from './project-access.js';
import { createMembershipStore } from './membership.js';
import { findUser, iso, userNotFound } from './user-rows.js';
import type { User } from './users.js';
import { withTransaction } from '../db/transaction.js';

/** A member of a project as the members panel shows them. */
export interface ProjectMember {
  userId: string;
  name: string;
  /** The member's role in this project: `projectRole` if an admin set one, else `platformRole` (admins: admin). */
  role: Role;
  /** Their role on the platform (users.role), which applies wherever no project role is set. */
  platformRole: Role;
  /** The role an admin set for this project only; null: the platform role applies. */
  projectRole: ProjectRole | null;
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
  /** Adds a user (admin; audited), with a role for this project if given. 404 unknown user, 409 already a member, 400 a role that is not one. */
  add(actor: User, projectId: string, input: { userId: string; role?: unknown }): Promise<ProjectMember>;
  /** One member, as `list` shows them (admins and the trial's PI); NOT_FOUND for a user who is not a member. */
  get(actor: User, projectId: string, userId: string): Promise<ProjectMember>;
  /** Sets a member's role in this project, or (null) lets their platform role apply again (admin; audited). */
  setRole(actor: User, projectId: string, userId: string, role: unknown): Promise<ProjectMember>;
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
      .select({ userId: users.id, name: users.name, platformRole: users.role, projectRole: projectMembers.role, canViewIdentifiers: projectMembers.canViewIdentifiers, addedAt: projectMembers.addedAt, deactivatedAt: users.deactivatedAt })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(where)
      .orderBy(asc(users.name));
    return rows.map((row) => {
      const role: Role = row.platformRole === 'admin' ? 'admin' : (row.projectRole ?? row.platformRole);
      return { ...row, role, seesIdentifiers: ROLES_SEEING_IDENTIFIERS.has(role) || row.canViewIdentifiers, addedAt: iso(row.addedAt)!, deactivatedAt: iso(row.deactivatedAt) };
    });
  }

  async function assertMayList(actor: User, projectId: string): Promise<void> {
    // Anyone outside the project learns nothing of it, as for its data (core/auth/project-access.ts).
    const role = await assertProjectRole(membership, actor, projectId);
    if (role !== 'admin' && role !== 'pi') {
      throw new ClinAgentError('FORBIDDEN', `Only admins and the trial's PI may list its members; your role in this trial is "${role}". Ask the PI.`, { role, needs: ['admin', 'pi'] });
    }
    await assertProjectExists(projectId);
  }

  function notMember(projectId: string, userId: string): ClinAgentError {
    return new ClinAgentError('NOT_FOUND', `User "${userId}" is not a member of project "${projectId}". Check the id (GET /api/iit/projects/${projectId}/members).`, { projectId, userId });
  }

  return {
    async get(actor, projectId, userId) {
      await assertMayList(actor, projectId);
      const [member] = isUuid(userId) ? await members(projectId, userId) : [];
      if (!member) throw notMember(projectId, userId);
      return member;
    },

    async list(actor, projectId) {
      await assertMayList(actor, projectId);
      return members(projectId);
    },

    async add(actor, projectId, input) {
      assertAdmin(actor, 'add members to a trial');
      await assertProjectExists(projectId);
      const user = await findUser(db, input.userId);
      if (!user) throw userNotFound(input.userId);
      const role = input.role === undefined ? null : projectRole(user, input.role);
      if (!(await membership.addMember(projectId, user.id, actor.name, role))) {
        throw new ClinAgentError('CONFLICT_STATE', `${user.name} is already a member of project "${projectId}". Reload the members list; to change what they may see, toggle their identifier access instead.`, { projectId, userId: user.id });
      }
      const [member] = await members(projectId, user.id);
      return member!;
    },

    async setRole(actor, projectId, userId, input) {
      assertAdmin(actor, "change a member's role in a trial");
      await assertProjectExists(projectId);
      if (!isUuid(userId)) throw notMember(projectId, userId);
      const user = await findUser(db, userId);
      if (!user) throw notMember(projectId, userId);
      const role = input === null ? null : projectRole(user, input);
      await withTransaction(db, async (tx) => {
        const where = and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId));
        const [current] = await tx.select({ role: projectMembers.role }).from(projectMembers).where(where).for('update');
        if (!current) throw notMember(projectId, userId);
        if (current.role === role) return;
        await tx.update(projectMembers).set({ role }).where(where);
        await appendAudit(tx, {
          projectId,
          entityType: 'member',
          entityId: userId,
          action: 'member.role_changed',
          actor: actor.name,
          oldValue: { role: current.role ?? user.role, projectRole: current.role },
          newValue: { role: role ?? user.role, projectRole: role },
        });
      });
      const [member] = await members(projectId, userId);
      return member!;
    },

    async remove(actor, projectId, userId) {
      assertAdmin(actor, 'remove members from a trial');
      await assertProjectExists(projectId);
      if (!isUuid(userId)) throw notMember(projectId, userId);
      await withTransaction(db, async (tx) => {
        const [removed] = await tx
          .delete(projectMembers)
          .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)))
          .returning({ canViewIdentifiers: projectMembers.canViewIdentifiers });
        if (!removed) throw notMember(projectId, userId);
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
 * A role for one project: pi, data_manager, coordinator or viewer. Admin is platform-wide (an admin is in every project with every
 * right), so it is refused here, as is a project role for an admin, which could only take rights away on paper.
 */
function projectRole(user: User, role: unknown): ProjectRole {
  if (typeof role !== 'string' || !(PROJECT_ROLES as readonly string[]).includes(role)) {
    const hint = role === 'admin' ? ' Admin applies on the whole platform: change the user with PATCH /api/users/:id {"role": "admin"}.' : '';
    throw new ClinAgentError('VALIDATION_FAILED', `A role in a trial must be one of ${PROJECT_ROLES.join(', ')}; got ${JSON.stringify(role)}.${hint}`, { field: 'role', allowed: [...PROJECT_ROLES] });
  }
  if (user.role === 'admin') {
    throw new ClinAgentError('CONFLICT_STATE', `${user.name} is an admin, who has every right in every trial; a trial role would change nothing. Change their platform role first (PATCH /api/users/${user.id}) if they should be a ${role}.`, { field: 'role', role: user.role, requested: role });
  }
  return role as ProjectRole;
}
