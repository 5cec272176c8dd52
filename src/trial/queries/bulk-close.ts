import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { pendingActions } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import { notHeld, queryConditions, shownStatus, TRANSITIONS, type QueryFilter, type QueryStatus } from '../queries.js';
import { appendAuditEntries } from '../store/audit.js';
import { withTransaction } from '../../core/db/transaction.js';

/** As many ids as a console selects across a few full pages; the request stays small. */
export const MAX_BULK_CLOSE_IDS = 1000;
/**
 * A close by filter holds the audit chain's lock for the whole transaction (one entry per query), so it is
 * bounded; a larger set is refused with its size rather than closed in part.
 */
const MAX_BULK_CLOSE_BY_FILTER = 5000;
export const MAX_CLOSE_REASON = 500;

export type BulkCloseFilter = Omit<QueryFilter, 'projectId' | 'limit' | 'offset'>;

export interface BulkCloseInput {
  projectId: string;
  actor: string;
  /** One reason for every query closed; it is each one's audit reason. */
  reason: string;
  /** Either the ids to close, or a filter whose closable queries are closed. */
  queryIds?: string[];
  filter?: BulkCloseFilter;
}

interface BulkCloseSkip {
  id: string;
  /** Null when no such query exists in the project. */
  status: QueryStatus | null;
  /** The record, visit and field the query is on, as the site knows it (null when no such query exists). */
  recordId: string | null;
  eventName: string | null;
  field: string | null;
  why: string;
}

export interface BulkCloseResult {
  closed: number;
  skipped: BulkCloseSkip[];
}

type Target = { id: string; status: Exclude<QueryStatus, 'held'>; recordId: string; eventName: string; field: string };

/** "record S017, v1_arm_1.weight_kg": how a data manager finds the query again, never by its uuid. */
function whereQueryIs(row: Pick<Target, 'recordId' | 'eventName' | 'field'>): string {
  return `record ${row.recordId}, ${row.eventName ? `${row.eventName}.` : ''}${row.field}`;
}

const located = (row: Pick<Target, 'recordId' | 'eventName' | 'field'>) => ({ recordId: row.recordId, eventName: row.eventName, field: row.field });

// Stored statuses; a held query is also stored as one of these, so every statement adds notHeld.
const CLOSABLE = (Object.keys(TRANSITIONS) as QueryStatus[]).filter((status) => status !== 'held' && TRANSITIONS[status].includes('closed')) as Target['status'][];

function assertInput(input: BulkCloseInput): void {
  const reason = input.reason?.trim() ?? '';
  if (!reason || reason.length > MAX_CLOSE_REASON) {
    throw new ClinAgentError('VALIDATION_FAILED', `A reason of 1 to ${MAX_CLOSE_REASON} characters is required to close queries in bulk: say why they need no further action.`, { field: 'reason' });
  }
  if ((input.queryIds === undefined) === (input.filter === undefined)) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Send either queryIds (the queries to close) or filter (close every closable query it matches), not both and not neither.', { field: 'queryIds' });
  }
  if (input.queryIds && (input.queryIds.length < 1 || input.queryIds.length > MAX_BULK_CLOSE_IDS)) {
    throw new ClinAgentError('VALIDATION_FAILED', `queryIds must list 1 to ${MAX_BULK_CLOSE_IDS} query ids; got ${input.queryIds.length}. Close a larger set in several requests or by filter.`, { field: 'queryIds' });
  }
}

/** The listed queries that may close; the rest are reported with why. A query of another project is not found. */
async function targetsById(tx: Db, projectId: string, queryIds: string[], skipped: BulkCloseSkip[]): Promise<Target[]> {
  const ids = [...new Set(queryIds)];
  const wellFormed = ids.filter(isUuid);
  const found = wellFormed.length
    ? await tx
        .select({ id: pendingActions.id, status: pendingActions.status, heldByTaskRunId: pendingActions.heldByTaskRunId, recordId: pendingActions.recordId, eventName: pendingActions.eventName, field: pendingActions.field })
        .from(pendingActions)
        .where(and(eq(pendingActions.projectId, projectId), inArray(pendingActions.id, wellFormed)))
        .for('update')
    : [];
  const byId = new Map(found.map((row) => [row.id, row]));
  const targets: Target[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (!row) skipped.push({ id, status: null, recordId: null, eventName: null, field: null, why: `No query "${id}" exists in project "${projectId}"; reload the list and select again.` });
    else if (shownStatus(row) === 'held') skipped.push({ id, status: 'held', ...located(row), why: `The query on ${whereQueryIs(row)} is held for the data manager's review of its QC run and has not reached the site; approve or reject it on the review page.` });
    else if (!CLOSABLE.includes(row.status)) skipped.push({ id, status: row.status, ...located(row), why: `The query on ${whereQueryIs(row)} is ${row.status}: it can go to ${TRANSITIONS[row.status].join(' or ')}, not closed.` });
    else targets.push({ id: row.id, status: row.status, ...located(row) });
  }
  return targets;
}

async function targetsByFilter(tx: Db, projectId: string, filter: BulkCloseFilter): Promise<Target[]> {
  const where = queryConditions({ ...filter, projectId });
  if (!where) return [];
  const targets = await tx
    .select({ id: pendingActions.id, status: pendingActions.status, recordId: pendingActions.recordId, eventName: pendingActions.eventName, field: pendingActions.field })
    .from(pendingActions)
    .where(and(where, inArray(pendingActions.status, CLOSABLE), notHeld))
    .orderBy(pendingActions.id)
    .limit(MAX_BULK_CLOSE_BY_FILTER + 1)
    .for('update');
  if (targets.length > MAX_BULK_CLOSE_BY_FILTER) {
    throw new ClinAgentError('VALIDATION_FAILED', `More than ${MAX_BULK_CLOSE_BY_FILTER} closable queries match this filter; bulk close takes at most ${MAX_BULK_CLOSE_BY_FILTER} at a time. Narrow the filter (site, field, severity, record or run) and close in several steps.`, { field: 'filter' });
  }
  return targets;
}

/**
 * Closes many queries in one transaction, each audited exactly as a single close is (action status:closed, old
 * and new status, the one reason), so an inspector cannot tell a bulk close from many single ones but by time.
 * Rows are locked first: a concurrent move of one of them waits instead of being overwritten.
 */
export async function bulkCloseQueries(db: Db, input: BulkCloseInput): Promise<BulkCloseResult> {
  assertInput(input);
  const reason = input.reason.trim();
  return withTransaction(db, async (tx) => {
    const skipped: BulkCloseSkip[] = [];
    const targets = input.queryIds ? await targetsById(tx, input.projectId, input.queryIds, skipped) : await targetsByFilter(tx, input.projectId, input.filter!);
    if (!targets.length) return { closed: 0, skipped };
    const updated = await tx
      .update(pendingActions)
      .set({ status: 'closed', updatedAt: new Date() })
      .where(and(eq(pendingActions.projectId, input.projectId), inArray(pendingActions.id, targets.map((target) => target.id)), inArray(pendingActions.status, CLOSABLE), notHeld))
      .returning({ id: pendingActions.id });
    const closedIds = new Set(updated.map((row) => row.id));
    const closed = targets.filter((target) => closedIds.has(target.id));
    for (const target of targets) if (!closedIds.has(target.id)) skipped.push({ id: target.id, status: target.status, ...located(target), why: `The query on ${whereQueryIs(target)} changed while being closed; reload and try again.` });
    await appendAuditEntries(
      tx,
      closed.map((target) => ({ projectId: input.projectId, entityType: 'query', entityId: target.id, action: 'status:closed', actor: input.actor, oldValue: { status: target.status }, newValue: { status: 'closed' }, reason })),
    );
    return { closed: closed.length, skipped };
  });
}
