import { jsonb, pgTable, text, timestamp, uuid, type AnyPgColumn, type PgTable } from 'drizzle-orm/pg-core';

/** PENDING: created, not started. SUSPENDED: waiting for a person (a decision or an answer). */
export type RunStatus = 'PENDING' | 'RUNNING' | 'SUSPENDED' | 'COMPLETED' | 'FAILED';

/** One saved step of a run, appended to its `steps` as the node's result is committed. */
export interface RunStep {
  node: string;
  type: string;
  at: string;
  outcome: string;
  next?: string;
  detail?: unknown;
}

/**
 * What a suspended run asks of a person. The store reads only two keys; the rest is the agent's own (what to
 * show, why the run stopped).
 */
export interface RunReviewRequest {
  /** sha256 of what the person is shown, taken when the run suspends; a decision on other data is refused. */
  dataHash?: string;
  /** 'answer': the run waits for a person's reply text (a consult's question); otherwise approve or reject. */
  awaiting?: 'decision' | 'answer';
  [key: string]: unknown;
}

export interface RunReview {
  reviewer: string;
  decision: 'approve' | 'reject' | 'answer';
  comment: string;
  /** The person's reply, for a run that waited for an answer. */
  answer?: string;
  decidedAt: string;
}

/** The columns the store reads and writes, by their Drizzle names; task_runs and agent_runs both have them. */
export const RUN_COLUMNS = [
  'id', 'status', 'currentNode', 'steps', 'onApprove', 'onReject', 'reviewRequest', 'review',
  'leaseOwner', 'leaseUntil', 'error', 'recoveredAt', 'updatedAt', 'completedAt',
] as const;

/** Any Drizzle table with the run columns; the store's queries use only those. */
export type RunTable = PgTable & Record<(typeof RUN_COLUMNS)[number], AnyPgColumn>;

/**
 * The run columns as one Drizzle table type, so the store's queries type-check whatever table they run on. Never
 * called: at run time every query uses the caller's table object, whose columns carry the real table name.
 */
function runShape() {
  return pgTable('runs', {
    id: uuid('id').primaryKey(),
    status: text('status').$type<RunStatus>().notNull(),
    currentNode: text('current_node').notNull(),
    steps: jsonb('steps').$type<Array<Record<string, unknown>>>().notNull(),
    onApprove: text('on_approve'),
    onReject: text('on_reject'),
    reviewRequest: jsonb('review_request').$type<RunReviewRequest | null>(),
    review: jsonb('review').$type<RunReview | null>(),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    error: text('error'),
    recoveredAt: timestamp('recovered_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  });
}

export type RunShape = ReturnType<typeof runShape>;
export type RunRow = RunShape['$inferSelect'];
