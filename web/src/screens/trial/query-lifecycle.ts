import type { DataQuery, QueryTransition } from '../../api';
import type { MessageKey } from '../../i18n/en';

/** The site must say what it found, and data management why an answer does not resolve the query. */
export function needsComment(to: QueryTransition): boolean {
  return to === 'answered' || to === 'reopened';
}

/**
 * What to say of a query whose rule no longer fires: a live query the user may close suggests closing it; a
 * closed or withdrawn one only says so (it needs nothing more), and a user who may not close is not told to.
 */
export function noLongerFiresKey(query: Pick<DataQuery, 'status' | 'allowedTransitions'>, mayMove: boolean): MessageKey {
  if (query.status === 'closed' || query.status === 'cancelled') return 'queries.noLongerFires.settled';
  return mayMove && query.allowedTransitions.includes('closed') ? 'queries.noLongerFires' : 'queries.noLongerFires.settled';
}

/**
 * The moves offered on a query: the server lists the ones the lifecycle (and the caller's role) allows; a role
 * that may not change the trial's data (a viewer) is offered none, whatever an older server sent.
 */
export function offeredMoves(query: Pick<DataQuery, 'allowedTransitions'>, mayChangeData: boolean): QueryTransition[] {
  return mayChangeData ? (query.allowedTransitions as QueryTransition[]) : [];
}
