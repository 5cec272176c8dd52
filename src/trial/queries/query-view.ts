import { assertProjectRole } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { identifierMask, type IdentifierMask } from '../identifiers.js';
import { transitionsFor, type DataQuery } from '../queries.js';

interface QueryView {
  mask: IdentifierMask;
  /** The query with identifier values masked and only the moves the actor's role may make offered. */
  query(query: DataQuery): DataQuery & { masked: boolean };
}

/**
 * Queries as `actor` sees them wherever they are shown (query list, record page, review queue): identifier values
 * masked, and only the moves their role in the trial may make offered, so no page offers a coordinator "close"
 * that the server then refuses. Checks membership (a non-member gets NOT_FOUND).
 */
export function createQueryView(deps: { db: Db; users: MembershipCheck }) {
  return async (actor: User, projectId: string): Promise<QueryView> => {
    const role = await assertProjectRole(deps.users, actor, projectId);
    const mask = await identifierMask(deps.db, projectId, actor);
    return { mask, query: (query: DataQuery) => transitionsFor(mask.query(query), role) };
  };
}
