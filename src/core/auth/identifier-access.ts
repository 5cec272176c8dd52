import { and, eq } from 'drizzle-orm';
import { appendAudit } from '../audit/audit-log.js';
import type { Db } from '../db/connect.js';
import { projectMembers, type Role } from '../db/schema/auth.js';
import { ClinAgentError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { User } from './users.js';
import { withTransaction } from '../db/transaction.js';

/**
 * Who sees identifier fields (REDCap "Identifier?" = y: names, phone numbers, addresses, birth dates).
 * Admins and PIs do; coordinators and viewers see them masked unless an admin grants them the right for one
 * project (project_members.can_view_identifiers), e.g. the coordinator who phones subjects for visits.
 * GCP and data-protection rules (ICH E6 4.8.10, PIPL, GDPR) ask that direct identifiers reach only those
 * who need them.
 */
export const ROLES_SEEING_IDENTIFIERS: ReadonlySet<Role> = new Set(['admin', 'pi']);

/** By the user's role in this project (a PI of one trial may be a coordinator in another), or the admin's grant. */
export async function canViewIdentifiers(db: Db, projectId: string, user: Pick<User, 'id' | 'role'>): Promise<boolean> {
  if (user.role === 'admin') return true;
  if (!isUuid(user.id)) return false;
  const [row] = await db
    .select({ canViewIdentifiers: projectMembers.canViewIdentifiers, role: projectMembers.role })
    .from(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, user.id)));
  if (!row) return false;
  return ROLES_SEEING_IDENTIFIERS.has(row.role ?? user.role) || row.canViewIdentifiers;
}

export interface IdentifierAccess {
  projectId: string;
  userId: string;
  canViewIdentifiers: boolean;
}

/**
 * Grants or withdraws a member's right to see identifiers in one project, with an audit entry (entity
 * `member`) in the same transaction. Setting the value it already has writes nothing.
 */
export async function setIdentifierAccess(db: Db, input: { projectId: string; userId: string; canViewIdentifiers: unknown; actor: string }): Promise<IdentifierAccess> {
  const { projectId, userId, actor } = input;
  if (typeof input.canViewIdentifiers !== 'boolean') {
    throw new ClinAgentError('VALIDATION_FAILED', 'canViewIdentifiers must be true or false: true lets this member see identifier fields (names, phone numbers, addresses) unmasked in this project.', { field: 'canViewIdentifiers' });
  }
  const canView = input.canViewIdentifiers;
  const notMember = () =>
    new ClinAgentError('NOT_FOUND', `User "${userId}" is not a member of project "${projectId}". Add them first (POST /api/projects/${projectId}/members), then grant the access.`, { projectId, userId });
  if (!isUuid(userId)) throw notMember();
  return withTransaction(db, async (tx) => {
    const where = and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId));
    const [current] = await tx.select({ canViewIdentifiers: projectMembers.canViewIdentifiers }).from(projectMembers).where(where).for('update');
    if (!current) throw notMember();
    if (current.canViewIdentifiers !== canView) {
      await tx.update(projectMembers).set({ canViewIdentifiers: canView }).where(where);
      await appendAudit(tx, {
        projectId,
        entityType: 'member',
        entityId: userId,
        action: canView ? 'member.identifiers_granted' : 'member.identifiers_revoked',
        actor,
        oldValue: { canViewIdentifiers: current.canViewIdentifiers },
        newValue: { canViewIdentifiers: canView },
      });
    }
    return { projectId, userId, canViewIdentifiers: canView };
  });
}
