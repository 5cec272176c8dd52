import { assertProjectReader } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import { createTrialReadTools, type TrialReadToolDeps } from './read-tools.js';

/** The trial assistant's read-only tools, handed out per project once the acting user is known to be a member. */
export function createReadToolService(deps: TrialReadToolDeps & { users: MembershipCheck }) {
  const tools = { db: deps.db, rag: deps.rag, hasVectorStore: deps.hasVectorStore };
  return {
    forProject: async (actor: User, projectId: string) => {
      await assertProjectReader(deps.users, actor, projectId);
      return createTrialReadTools(tools, { projectId });
    },
  };
}

export type ReadToolService = ReturnType<typeof createReadToolService>;
