import { pgTable, type AnyPgColumn, type PgTable } from 'drizzle-orm/pg-core';
import { runColumns, type RunStatus } from '../../core/db/schema/run-columns.js';

export type { RunStatus };

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
  /**
   * 'answer': the run waits for a person's reply text (a consult's question); 'input': for either a reply or an
   * approval (a staged agent between messages: the next message, or the user confirming the stage); otherwise
   * approve or reject.
   */
  awaiting?: 'decision' | 'answer' | 'input';
  [key: string]: unknown;
}

export interface RunReview {
  reviewer: string;
  decision: 'approve' | 'reject' | 'answer';
  comment: string;
  /** The person's reply, for a run that waited for an answer. */
  answer?: string;
  /** The reply as a typed input (a consult's text and attachment), which the run's family reads with its own schema. */
  input?: unknown;
  decidedAt: string;
}

/** Any Drizzle table built with the run columns (core/db/schema/run-columns.ts); the store's queries use only those. */
export type RunTable = PgTable & Record<keyof ReturnType<typeof runColumns>, AnyPgColumn>;

/**
 * The run columns as one Drizzle table type, so the store's queries type-check whatever table they run on. Never
 * called: at run time every query uses the caller's table object, whose columns carry the real table name.
 */
function runShape() {
  return pgTable('runs', runColumns<RunStatus, RunReviewRequest, RunReview>());
}

export type RunShape = ReturnType<typeof runShape>;
export type RunRow = RunShape['$inferSelect'];
