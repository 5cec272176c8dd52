import { assertProjectReader, assertProjectWriter } from '../../core/auth/project-access.js';
import type { User } from '../../core/auth/users.js';
import { ClinAgentError } from '../../core/errors.js';
import type { MemoryDeps } from '../types.js';
import { projectExists } from './memory-queries.js';

/**
 * Membership, then existence: admins belong to every project id, including ones that do not exist, and
 * their memory must answer NOT_FOUND like any other missing project rather than an empty document.
 */
export async function assertMemoryReader(deps: Pick<MemoryDeps, 'db' | 'users'>, actor: User, projectId: string): Promise<void> {
  await assertProjectReader(deps.users, actor, projectId);
  await assertProjectExists(deps, projectId);
}

export async function assertMemoryWriter(deps: Pick<MemoryDeps, 'db' | 'users'>, actor: User, projectId: string): Promise<void> {
  await assertProjectWriter(deps.users, actor, projectId);
  await assertProjectExists(deps, projectId);
}

async function assertProjectExists(deps: Pick<MemoryDeps, 'db'>, projectId: string): Promise<void> {
  if (typeof projectId !== 'string' || !(await projectExists(deps.db, projectId))) {
    throw new ClinAgentError('NOT_FOUND', `Project "${projectId}" does not exist or you are not a member. Ask a trial admin to add you.`, { projectId });
  }
}
