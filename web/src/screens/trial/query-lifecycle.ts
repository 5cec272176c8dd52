import type { QueryStatus, QueryTransition } from '../../api';

/**
 * Which buttons a query row offers. Mirrors TRANSITIONS in src/trial/queries.ts, which decides: the server
 * refuses any other move with CONFLICT_STATE, so a stale copy here shows a button that fails, never a wrong change.
 */
const TRANSITIONS: Record<QueryStatus, QueryTransition[]> = {
  open: ['answered', 'closed'],
  answered: ['closed', 'reopened'],
  reopened: ['answered', 'closed'],
  closed: ['reopened'],
};

export function allowedTransitions(status: QueryStatus): QueryTransition[] {
  return TRANSITIONS[status] ?? [];
}

/** The site must say what it found, and data management why an answer does not resolve the query. */
export function needsComment(to: QueryTransition): boolean {
  return to === 'answered' || to === 'reopened';
}
