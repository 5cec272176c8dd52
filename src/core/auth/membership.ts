import { and, eq, inArray } from 'drizzle-orm';
import { appendAudit } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { PROJECT_ROLES, projectMembers, projects, type ProjectRole, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import { findUser, userNotFound } from './user-rows.js';
import { WRITER_ROLES, type User } from './users.js';
import { withTransaction } from '../db/transaction.js';

// The project roles that write, from the one list of writer roles, so a new role cannot be left out here.
const PROJECT_WRITER_ROLES = PROJECT_ROLES.filter((role) => WRITER_ROLES.has(role));

/**
 * The one question the library functions guarding project data ask (trial QC, memory, conversations, the
 * assistant). Admins belong to every project.
 */
export interface MembershipCheck {
  isMember(projectId: string, user: User): Promise<boolean>;
  /**
   * The user's role in the project: admin for admins, else the role an admin set for this project, else their
   * platform role; null when they are not a member. What a member may do in a project goes by this role.
   */
  roleIn(projectId: string, user: User): Promise<Role | null>;
  /** Whether the user has a writer role (coordinator, data manager, PI) in at least one project, whatever their platform role. */
  writesInSomeProject(user: User): Promise<boolean>;
}

export interface MembershipStore extends MembershipCheck {
  /** The projects the user was added to (admins' implicit membership of every project not included). */
  projectIds(userId: string): Promise<string[]>;
  /**
   * Adds a user to a project with its audit entry; adding a member twice changes and records nothing. True when
   * the user was added, false when they already were a member.
   */
  addMember(projectId: string, userId: string, actor?: string, role?: ProjectRole | null): Promise<boolean>;
}

export function createMembershipStore(db: Db): MembershipStore {
  return {
    async projectIds(userId) {
      if (!isUuid(userId)) return [];
      return (await db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId))).map((r) => r.id);
    },

    async addMember(projectId, userId, actor = 'system', role = null) {
      const [project] = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId));
      if (!project) throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist. Check the id (GET /api/projects).`, { projectId });
      const member = await findUser(db, userId);
      if (!member) throw userNotFound(userId);
      return withTransaction(db, async (tx) => {
        const added = await tx.insert(projectMembers).values({ projectId, userId, role }).onConflictDoNothing().returning({ userId: projectMembers.userId });
        if (added.length) await appendAudit(tx, { projectId, entityType: 'member', entityId: userId, action: 'member.add', actor, newValue: { userId, userName: member.name, role: role ?? member.role, projectRole: role } });
        return added.length > 0;
      });
    },

    isMember: async (projectId, user) => (await roleInProject(db, projectId, user)) !== null,

    roleIn: (projectId, user) => roleInProject(db, projectId, user),

    async writesInSomeProject(user) {
      if (!isUuid(user.id)) return false;
      const [row] = await db
        .select({ projectId: projectMembers.projectId })
        .from(projectMembers)
        .where(and(eq(projectMembers.userId, user.id), inArray(projectMembers.role, PROJECT_WRITER_ROLES)))
        .limit(1);
      return Boolean(row);
    },
  };
}

async function roleInProject(db: Db, projectId: string, user: Pick<User, 'id' | 'role'>): Promise<Role | null> {
  if (user.role === 'admin') return 'admin';
  if (!isUuid(user.id)) return null;
  const [row] = await db
    .select({ role: projectMembers.role })
    .from(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, user.id)));
  return row ? (row.role ?? user.role) : null;
}
