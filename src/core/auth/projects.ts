import { eq } from 'drizzle-orm';
import { appendAudit } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { projectMembers, projects } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import type { User } from './users.js';
import { withTransaction } from '../db/transaction.js';

export interface ProjectSummary {
  id: string;
  name: string;
}

/** The projects a user sees: all of them for an admin, else those the user is a member of. */
export interface ProjectDirectory {
  listProjects(user: User): Promise<ProjectSummary[]>;
}

export interface ProjectStore extends ProjectDirectory {
  /** Creates a project with its audit entry (who created it). */
  createProject(input: ProjectSummary, actor?: string): Promise<ProjectSummary>;
}

export function createProjectStore(db: Db): ProjectStore {
  return {
    async createProject({ id, name }, actor = 'system') {
      return withTransaction(db, async (tx) => {
        const [row] = await tx.insert(projects).values({ id, name }).onConflictDoNothing().returning({ id: projects.id, name: projects.name });
        if (!row) throw new ClinAgentError('CONFLICT_STATE', `A project with id "${id}" already exists. Choose another id.`, { field: 'id' });
        await appendAudit(tx, { projectId: id, entityType: 'project', entityId: id, action: 'project.create', actor, newValue: { name } });
        return row;
      });
    },

    async listProjects(user) {
      if (user.role === 'admin') return db.select({ id: projects.id, name: projects.name }).from(projects).orderBy(projects.id);
      return db
        .select({ id: projects.id, name: projects.name })
        .from(projects)
        .innerJoin(projectMembers, eq(projectMembers.projectId, projects.id))
        .where(eq(projectMembers.userId, user.id))
        .orderBy(projects.id);
    },
  };
}
