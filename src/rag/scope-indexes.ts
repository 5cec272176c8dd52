import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Db } from '../core/db/connect.js';
import * as q from './rag-sql.js';
import type { VectorShape } from './vector-sql.js';

/**
 * How long one indexing step should hold the database. On PGlite every query shares one connection, so a step
 * is a stall for everyone else: short steps let a query in between, at the price of a round trip each.
 */
const STEP_TARGET_MS = 250;
const MIN_BATCH = 25;
const MAX_BATCH = 5_000;
/** HNSW inserts cost ~1-4 ms a chunk on PGlite; the first step starts small and the next ones adapt. */
const FIRST_BATCH = 100;

export interface ExtendProgress {
  /** Chunks flagged (added to the index) so far in this call. */
  flagged: number;
  /** The scope's chunks outside the index when the call started, minus those flagged since (an estimate: ingests go on). */
  remaining: number;
}

export interface ExtendResult {
  flagged: number;
  steps: number;
  /** The longest step: the longest any other query waited on PGlite's single connection. */
  longestStepMs: number;
}

export interface ScopeIndexes {
  /** Whether the named index exists; a positive answer is remembered, since a query never drops an index. */
  exists(db: Db, name: string): Promise<boolean>;
  /**
   * Creates the scope's index when missing (empty, so at once), then adds the scope's unindexed chunks to it in
   * steps of about STEP_TARGET_MS until none is left, reporting after each step.
   */
  extend(db: Db, scope: { collection: string; scenarioId: string; name: string; shape: VectorShape }, onProgress?: (progress: ExtendProgress) => void | Promise<void>): Promise<ExtendResult>;
}

export function createScopeIndexes(): ScopeIndexes {
  const known = new Set<string>();

  async function exists(db: Db, name: string): Promise<boolean> {
    if (known.has(name)) return true;
    if (!(await q.indexExists(db, name))) return false;
    known.add(name);
    return true;
  }

  return {
    exists,

    async extend(db, scope, onProgress) {
      if (!(await exists(db, scope.name))) {
        try {
          await q.createScopeIndex(db, { name: scope.name, collection: scope.collection, scenarioId: scope.scenarioId, shape: scope.shape });
        } catch (error) {
          // Another worker may have created it between our check and our CREATE (duplicate name in pg_class).
          if (!(await q.indexExists(db, scope.name))) throw error;
        }
        known.add(scope.name);
      }
      const remaining = await q.countUnindexedChunks(db, scope);
      // SKIP LOCKED: a step that flags nothing means another worker holds the rest, and its steps finish the scope.
      return extendInSteps((limit) => q.flagChunksIndexed(db, { collection: scope.collection, scenarioId: scope.scenarioId, limit }), remaining, { first: FIRST_BATCH, min: MIN_BATCH, max: MAX_BATCH }, onProgress);
    },
  };
}

/**
 * Adds a scope's chunks to its index in steps of about STEP_TARGET_MS: `step(limit)` adds up to `limit` and says
 * how many it added; the loop ends when a step adds fewer than asked (none left, or taken by another worker).
 * Each step's rate sizes the next, never more than doubling at once. Shared by pgvector's flagging (above) and the
 * in-process graphs (memory-index/).
 */
export async function extendInSteps(
  step: (limit: number) => Promise<number>,
  remainingAtStart: number,
  batches: { first: number; min: number; max: number },
  onProgress?: (progress: ExtendProgress) => void | Promise<void>,
): Promise<ExtendResult> {
  const result: ExtendResult = { flagged: 0, steps: 0, longestStepMs: 0 };
  let remaining = remainingAtStart;
  let batch = batches.first;
  for (;;) {
    const t0 = performance.now();
    const limit = batch;
    const added = await step(limit);
    const ms = performance.now() - t0;
    if (added === 0) break;
    result.flagged += added;
    result.steps++;
    result.longestStepMs = Math.max(result.longestStepMs, ms);
    remaining = Math.max(0, remaining - added);
    await onProgress?.({ flagged: result.flagged, remaining });
    if (added < limit) break; // the scope is done (chunks ingested meanwhile were taken too)
    // PGlite runs each statement synchronously on this thread and resolves it as a microtask, so a loop of
    // steps would never let timers or I/O run: the HTTP server in the same process would not even read a
    // request until the whole build ended (measured: one query in 44 s of building). Yielding here lets
    // them in between steps.
    await yieldToEventLoop();
    batch = Math.round(Math.min(batches.max, 2 * batch, Math.max(batches.min, (STEP_TARGET_MS * added) / Math.max(ms, 1e-3))));
  }
  return result;
}
