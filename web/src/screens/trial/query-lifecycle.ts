import type { QueryTransition } from '../../api';

/** The site must say what it found, and data management why an answer does not resolve the query. */
export function needsComment(to: QueryTransition): boolean {
  return to === 'answered' || to === 'reopened';
}
