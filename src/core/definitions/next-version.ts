import type { ClinAgentError } from '../errors.js';

/**
 * Two writers adding a version at once (two admins saving, two processes seeding at start-up) both compute the
 * same next number; the loser's insert meets the primary key and is retried on the new newest, so both versions
 * are kept in order and neither is lost. Five rounds is far beyond what people editing one definition produce.
 */
const MAX_ATTEMPTS = 5;

/**
 * Adds a version numbered one past the newest, for any versioned definition table (staged-agent configurations,
 * QC skills): `insert` returns the row, or undefined when the number was taken meanwhile (ON CONFLICT DO NOTHING).
 */
export async function addNextVersion<R>(
  latestVersion: () => Promise<number | undefined>,
  insert: (version: number) => Promise<R | undefined>,
  /** The CONFLICT_STATE error naming the definition, for writers still colliding after every attempt. */
  conflict: () => ClinAgentError,
): Promise<R> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const row = await insert(((await latestVersion()) ?? 0) + 1);
    if (row) return row;
  }
  throw conflict();
}
