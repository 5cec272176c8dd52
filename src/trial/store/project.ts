import { queryRows, sql, type Db } from '../../core/db/connect.js';
import { projects } from '../../core/db/schema/auth.js';
import { ClinAgentError } from '../../core/errors.js';
import { appendAudit } from './audit.js';
import { withTransaction } from '../../core/db/transaction.js';

/** Creates the project (trial) unless it exists; an existing project keeps its name. Returns whether it was created. */
export async function ensureProject(db: Db, project: { id: string; name: string }, actor: string): Promise<boolean> {
  if (!project.id.trim()) throw new ClinAgentError('VALIDATION_FAILED', 'Project id is empty. Pass an id such as "demo-htn-01".', { field: 'id' });
  return withTransaction(db, async (tx) => {
    const inserted = await tx.insert(projects).values({ id: project.id, name: project.name }).onConflictDoNothing().returning({ id: projects.id });
    if (inserted.length === 0) return false;
    await appendAudit(tx, { projectId: project.id, entityType: 'project', entityId: project.id, action: 'project.create', actor, newValue: { name: project.name } });
    return true;
  });
}

/**
 * Locks the project row until the transaction ends. Two imports of one project at once would otherwise
 * both see a record as new and the second would fail on the primary key halfway through its batch.
 */
export async function lockProject(db: Db, projectId: string): Promise<void> {
  const rows = await queryRows<{ id: string }>(db, sql`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`);
  if (rows.length === 0) throw projectNotFound(projectId);
}

function projectNotFound(projectId: string): ClinAgentError {
  return new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist. Check the project id, or create the project first.`, { projectId });
}
