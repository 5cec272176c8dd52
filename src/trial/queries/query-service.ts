import { assertProjectWriter, assertQueryCloser } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import type { QueryStatus } from '../../core/db/schema/trial.js';
import { DECIDING_MOVES, transitionQuery } from '../queries.js';
import { bulkCloseQueries, type BulkCloseInput } from './bulk-close.js';
import { pageQueries, type QueryPageRequest } from './query-page.js';
import { createQueryView } from './query-view.js';

/**
 * Data queries raised to sites, as members work them: pages of them, moves along the lifecycle, bulk close. The site
 * answers (a writer role); closing and reopening are data management's (admin, PI, data manager). Every query
 * returned follows the actor's view of identifiers and offers only the moves their role may make.
 */
export function createQueryService(deps: { db: Db; users: MembershipCheck }) {
  const { db, users } = deps;
  const queryView = createQueryView(deps);

  return {
    /** One page of queries, sorted, with the total and the counts per status. */
    page: async (actor: User, request: QueryPageRequest) => {
      const view = await queryView(actor, request.projectId);
      const page = await pageQueries(db, request);
      return { ...page, queries: page.queries.map(view.query) };
    },
    /** Closes the listed (or filtered) queries that may close, with one reason, each audited; reports the rest. */
    bulkClose: async (actor: User, projectId: string, input: Omit<BulkCloseInput, 'projectId' | 'actor'>) => {
      await assertQueryCloser(users, actor, projectId, 'close queries');
      return bulkCloseQueries(db, { ...input, projectId, actor: actor.name });
    },
    transition: async (actor: User, projectId: string, queryId: string, to: QueryStatus, comment: string) => {
      if (DECIDING_MOVES.includes(to)) await assertQueryCloser(users, actor, projectId, to === 'closed' ? 'close a query' : 'reopen a query');
      else await assertProjectWriter(users, actor, projectId);
      const query = await transitionQuery(db, { projectId, queryId, to, actor: actor.name, comment });
      return (await queryView(actor, projectId)).query(query);
    },
  };
}

export type QueryService = ReturnType<typeof createQueryService>;
