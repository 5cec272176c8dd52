import { jsonb, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * PENDING: created, not started. SUSPENDED: waiting for a person (a decision or an answer). CANCELLED: stopped by
 * a person before it ended (agent runs; a trial task run never is).
 */
export type RunStatus = 'PENDING' | 'RUNNING' | 'SUSPENDED' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

/**
 * The columns every durable run table has (task_runs, agent_runs): what the one run store and step driver read and
 * write. Declared once here, so the tables and the store's own shape (agent/runs/run-shape.ts) never drift apart;
 * a table adds only its own columns (a trial run's record, an agent run's checkpoint). The type parameters narrow
 * the JSON columns and the status to what one table stores.
 */
export function runColumns<
  Status extends string = RunStatus,
  Request = Record<string, unknown>,
  Review = Record<string, unknown>,
>() {
  return {
    id: uuid('id').primaryKey().defaultRandom(),
    status: text('status').$type<Status>().notNull(),
    currentNode: text('current_node').notNull(),
    steps: jsonb('steps').$type<Array<Record<string, unknown>>>().notNull().default([]),
    /** Where a suspended run goes on approve (or, waiting for an answer, with the answer) and on reject. */
    onApprove: text('on_approve'),
    onReject: text('on_reject'),
    /** What a suspended run asks of a person, and why it stopped. */
    reviewRequest: jsonb('review_request').$type<Request | null>(),
    review: jsonb('review').$type<Review | null>(),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    error: text('error'),
    /** Set when the orphan sweep picked the run up after its worker stopped; cleared when the run moves on. */
    recoveredAt: timestamp('recovered_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  };
}
