import { and, desc, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../core/db/connect.js';
import { QUERY_CLOSER_ROLES, WRITER_ROLES } from '../core/auth/users.js';
import type { Role } from '../core/db/schema/auth.js';
import { ACTIVE_QUERY_STATUSES, pendingActions, type QueryStatus as StoredQueryStatus } from '../core/db/schema/trial.js';
import { ClinAgentError } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { appendAudit } from './store/audit.js';
import { withTransaction } from '../core/db/transaction.js';

/**
 * The status people see. `held`: raised by a run and kept from the site until that run's review (or its end)
 * lets it go. It is not stored as a status: a live query with `heldByTaskRunId` is held, so the one-live-query
 * index over the stored statuses still guards it, and queries held before this status existed read `held` too.
 */
export type QueryStatus = StoredQueryStatus | 'held';

type QueryRow = typeof pendingActions.$inferSelect;

/** A query as clients see it: the stored row with the status people see, plus the moves its lifecycle allows next. */
export type DataQuery = Omit<QueryRow, 'status' | 'readFingerprint'> & { status: QueryStatus; allowedTransitions: QueryStatus[] };

const isActive = (status: StoredQueryStatus): boolean => (ACTIVE_QUERY_STATUSES as readonly string[]).includes(status);

export function shownStatus(row: Pick<QueryRow, 'status' | 'heldByTaskRunId'>): QueryStatus {
  return row.heldByTaskRunId !== null && isActive(row.status) ? 'held' : row.status;
}

export const withTransitions = (row: QueryRow): DataQuery => {
  const status = shownStatus(row);
  // The hash of the values the rule read stays on the server: whoever sees a value masked could test guesses against it.
  const { readFingerprint: _serverOnly, ...shown } = row;
  return { ...shown, status, allowedTransitions: TRANSITIONS[status] };
};

// Constants of the schema only, inlined so the expression is the same text wherever it is grouped or sorted by.
const ACTIVE_SQL = sql.raw(ACTIVE_QUERY_STATUSES.map((status) => `'${status}'`).join(', '));

/** shownStatus in SQL, for counting and sorting by the status people see. */
export const shownStatusSql: SQL<QueryStatus> = sql<QueryStatus>`CASE WHEN ${pendingActions.heldByTaskRunId} IS NOT NULL AND ${pendingActions.status} IN (${ACTIVE_SQL}) THEN 'held' ELSE ${pendingActions.status} END`;

/** The rows whose shown status is `status`. */
function hasShownStatus(status: QueryStatus): SQL {
  if (status === 'held') return and(isNotNull(pendingActions.heldByTaskRunId), inArray(pendingActions.status, [...ACTIVE_QUERY_STATUSES]))!;
  if (!isActive(status)) return eq(pendingActions.status, status);
  return and(eq(pendingActions.status, status), isNull(pendingActions.heldByTaskRunId))!;
}

/** Rows a member may move: not held for a review (the review, not a person at the site, lets those go). */
export const notHeld: SQL = or(isNull(pendingActions.heldByTaskRunId), sql`${pendingActions.status} NOT IN (${ACTIVE_SQL})`)!;

/**
 * The lifecycle of a data query, as EDC systems run it: the site answers, data management closes it or
 * reopens it when the answer does not resolve the issue. A closed query can be reopened if the data change.
 */
export const TRANSITIONS: Record<QueryStatus, QueryStatus[]> = {
  // Only its run's review sends it (open) or withdraws it (cancelled or closed); nobody answers it before the site has it.
  held: [],
  open: ['answered', 'closed'],
  answered: ['closed', 'reopened'],
  reopened: ['answered', 'closed'],
  closed: ['reopened'],
  // Withdrawn by a rejected review before the site saw it; data management can still raise it again.
  cancelled: ['reopened'],
};

/** What a list of queries can be narrowed by; every field but projectId is optional. */
export interface QueryFilter {
  projectId: string;
  status?: QueryStatus;
  site?: string;
  field?: string;
  severity?: string;
  recordId?: string;
  ruleId?: string;
  taskRunId?: string;
  /** Absent: every matching query. Callers that show a page use pageQueries (queries/query-page.ts). */
  limit?: number;
  offset?: number;
}

/**
 * The WHERE conditions of a filter, shared by the list, the paged list and bulk close so they always agree on
 * which queries a filter means. Null when the filter can match nothing: a malformed run id compared with the
 * uuid column would make PostgreSQL throw.
 */
export function queryConditions(filter: Omit<QueryFilter, 'limit' | 'offset'>): SQL | null {
  if (filter.taskRunId && !isUuid(filter.taskRunId)) return null;
  return and(
    eq(pendingActions.projectId, filter.projectId),
    filter.status ? hasShownStatus(filter.status) : undefined,
    filter.site ? eq(pendingActions.site, filter.site) : undefined,
    filter.field ? eq(pendingActions.field, filter.field) : undefined,
    filter.severity ? eq(pendingActions.severity, filter.severity as DataQuery['severity']) : undefined,
    filter.recordId ? eq(pendingActions.recordId, filter.recordId) : undefined,
    filter.ruleId ? eq(pendingActions.ruleId, filter.ruleId) : undefined,
    filter.taskRunId ? eq(pendingActions.taskRunId, filter.taskRunId) : undefined,
  )!;
}

/** Matching queries, newest first; the id breaks ties so repeated calls (and offsets) see one order. */
export async function listQueries(db: Db, filter: QueryFilter): Promise<DataQuery[]> {
  const where = queryConditions(filter);
  if (!where) return [];
  let query = db.select().from(pendingActions).where(where).orderBy(desc(pendingActions.createdAt), pendingActions.recordId, pendingActions.id).$dynamic();
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  if (filter.offset) query = query.offset(filter.offset);
  return (await query).map(withTransitions);
}

/** Moves a query along its lifecycle; who, when and why go to the audit trail in the same transaction. */
export async function transitionQuery(db: Db, input: { projectId: string; queryId: string; to: StoredQueryStatus; actor: string; comment: string }): Promise<DataQuery> {
  if (!isUuid(input.queryId)) throw new ClinAgentError('NOT_FOUND', `Query "${input.queryId}" does not exist in project "${input.projectId}". Query ids are UUIDs; copy one from GET /api/iit/projects/${input.projectId}/queries.`, { queryId: input.queryId });
  return withTransaction(db, async (tx) => {
    const [current] = await tx.select().from(pendingActions).where(and(eq(pendingActions.id, input.queryId), eq(pendingActions.projectId, input.projectId)));
    if (!current) throw new ClinAgentError('NOT_FOUND', `Query "${input.queryId}" does not exist in project "${input.projectId}". Check the id.`, { queryId: input.queryId });
    const status = shownStatus(current);
    if (status === 'held') {
      throw new ClinAgentError(
        'CONFLICT_STATE',
        `Query ${input.queryId} is held for the data manager's review of task run ${current.heldByTaskRunId} and has not reached the site, so it cannot be ${input.to} yet. Approve that run's review to send it (it then reads open) or reject it to withdraw it; a run without a review sends it when it ends.`,
        { status, allowed: [], heldByTaskRunId: current.heldByTaskRunId },
      );
    }
    const allowed = TRANSITIONS[status];
    if (!allowed.includes(input.to)) {
      throw new ClinAgentError('CONFLICT_STATE', `Query ${input.queryId} is ${status}; it can go to ${allowed.join(' or ')}, not ${input.to}. Reload to see its current state.`, { status, allowed });
    }
    if ((input.to === 'answered' || input.to === 'reopened') && !input.comment.trim()) {
      throw new ClinAgentError('VALIDATION_FAILED', `A comment is required to mark a query ${input.to}: say what was found or what is still wrong.`, { field: 'comment' });
    }
    // The status in the WHERE makes a concurrent transition of the same query fail instead of overwriting.
    const [updated] = await tx
      .update(pendingActions)
      .set({ status: input.to, updatedAt: new Date() })
      .where(and(eq(pendingActions.id, input.queryId), eq(pendingActions.status, current.status), notHeld))
      .returning();
    if (!updated) throw new ClinAgentError('CONFLICT_STATE', `Query ${input.queryId} changed while you were editing it. Reload and try again.`);
    await appendAudit(tx, { projectId: input.projectId, entityType: 'query', entityId: input.queryId, action: `status:${input.to}`, actor: input.actor, oldValue: { status: current.status }, newValue: { status: input.to }, reason: input.comment });
    return withTransitions(updated);
  });
}


/**
 * The moves that decide a query: closing it (resolved, or verified against source) and reopening it (the answer
 * does not resolve it). They are data management's (core/auth/users.ts QUERY_CLOSER_ROLES: admin, PI, data
 * manager); the site (coordinator) only answers. Checked by the query service (queries/query-service.ts) with assertQueryCloser for every caller.
 */
export const DECIDING_MOVES: readonly QueryStatus[] = ['closed', 'reopened'];

/** The moves this role may make next, so a client offers only those: the site answers only, a viewer nothing. */
export function transitionsFor<T extends { allowedTransitions: QueryStatus[] }>(query: T, role: Role): T {
  if (QUERY_CLOSER_ROLES.has(role)) return query;
  if (!WRITER_ROLES.has(role)) return { ...query, allowedTransitions: [] };
  return { ...query, allowedTransitions: query.allowedTransitions.filter((to) => !DECIDING_MOVES.includes(to)) };
}
