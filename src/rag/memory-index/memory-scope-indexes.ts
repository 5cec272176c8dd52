import type { Db } from '../../core/db/connect.js';
import * as q from '../rag-sql.js';
import { extendInSteps, type ExtendProgress, type ExtendResult } from '../scope-indexes.js';
import { createScopeGraph, searchExpansionFor, type ScopeGraph, type UsearchModule } from './usearch-graph.js';

/**
 * The embedded database's scope indexes: one HNSW graph per large scope in this process's memory (usearch), where
 * pgvector's on-disk HNSW would run as single-threaded WebAssembly inside PGlite, 2 to 3 times slower to search
 * and 5 times slower to extend (docs/rag.md). The table stays the only record:
 * - a graph holds every chunk of its scope whose seq is at most its watermark (deleted ones aside), and is
 *   extended by reading the chunks above it in seq order. On PGlite one transaction runs at a time, so a chunk
 *   with a lower seq cannot commit after a read that passed it;
 * - a query takes the graph's candidates, then reads them back from the table with the chunks above the watermark
 *   (graphNearestQuery): a deleted chunk is not found, a new one is compared exactly, so answers are complete at
 *   every moment, whatever the graph holds;
 * - a graph is rebuilt from the table after every start (in the background, by the ingest and index jobs that the
 *   start queues); until then its scope is searched exactly.
 */
export interface GraphScope {
  collection: string;
  scenarioId: string;
  dimension: number;
}

export interface GraphView {
  watermark: number;
  size: number;
}

export interface MemoryScopeIndexes {
  /** The scope's graph, undefined until extend has created it in this process. */
  view(scope: GraphScope): GraphView | undefined;
  /** Adds the scope's chunks above the watermark in steps of about 250 ms (extendInSteps), reporting after each. */
  extend(db: Db, scope: GraphScope, onProgress?: (progress: ExtendProgress) => void | Promise<void>): Promise<ExtendResult>;
  /** The seq of the graph's `count` nearest chunks, and the watermark they were taken under. */
  candidates(scope: GraphScope, vector: readonly number[], count: number): { seqs: number[]; watermark: number } | undefined;
  /** Drops deleted chunks from the graph, so that its candidates stay live. */
  forget(scope: Omit<GraphScope, 'dimension'>, seqs: readonly number[]): void;
}

/** Steps of about 250 ms (extendInSteps): each holds the event loop (a native call) and PGlite's one connection. */
const FIRST_BATCH = 100;
const MIN_BATCH = 100;
const MAX_BATCH = 20_000;

interface ScopeState {
  graph: ScopeGraph;
  watermark: number;
  /** extend() calls on one scope take turns: two would read and add the same chunks. */
  turn: Promise<unknown>;
}

export function createMemoryScopeIndexes(library: UsearchModule): MemoryScopeIndexes {
  const scopes = new Map<string, ScopeState>();
  const keyOf = (scope: Omit<GraphScope, 'dimension'>) => `${scope.collection}\u0000${scope.scenarioId}`;

  function stateFor(scope: GraphScope): ScopeState {
    const key = keyOf(scope);
    let state = scopes.get(key);
    // A collection's dimension is fixed at its first ingest; a graph of another one is from a collection deleted
    // and made again, and is replaced.
    if (!state || state.graph.dimension !== scope.dimension) {
      state = { graph: createScopeGraph(library, scope.dimension), watermark: 0, turn: Promise.resolve() };
      scopes.set(key, state);
    }
    return state;
  }

  async function extendNow(db: Db, scope: GraphScope, state: ScopeState, onProgress?: (progress: ExtendProgress) => void | Promise<void>): Promise<ExtendResult> {
    const remaining = await q.countChunksAfter(db, { ...scope, afterSeq: state.watermark });
    if (remaining === 0) return { flagged: 0, steps: 0, longestStepMs: 0 };
    return extendInSteps(
      async (limit) => {
        const rows = await q.selectChunkVectorsAfter(db, { ...scope, afterSeq: state.watermark, limit });
        if (rows.length === 0) return 0;
        const vectors = new Float32Array(rows.length * scope.dimension);
        rows.forEach((row, i) => parseVectorInto(row.embedding, vectors, i * scope.dimension, scope.dimension));
        // The add and the watermark move together, with no await between: a query sees both or neither.
        state.graph.add(
          rows.map((row) => row.seq),
          vectors,
        );
        state.watermark = rows.at(-1)!.seq;
        return rows.length;
      },
      remaining,
      { first: FIRST_BATCH, min: MIN_BATCH, max: MAX_BATCH },
      onProgress,
    );
  }

  return {
    view(scope) {
      const state = scopes.get(keyOf(scope));
      return state && state.graph.dimension === scope.dimension ? { watermark: state.watermark, size: state.graph.size() } : undefined;
    },

    extend(db, scope, onProgress) {
      const state = stateFor(scope);
      const run = state.turn.then(() => extendNow(db, scope, state, onProgress));
      state.turn = run.catch(() => undefined);
      return run;
    },

    candidates(scope, vector, count) {
      const state = scopes.get(keyOf(scope));
      if (!state || state.graph.dimension !== scope.dimension) return undefined;
      return { seqs: state.graph.search(vector, count, searchExpansionFor(state.graph.size())), watermark: state.watermark };
    },

    forget(scope, seqs) {
      scopes.get(keyOf(scope))?.graph.remove(seqs);
    },
  };
}

/** pgvector's text form `[0.1,-2e-05,...]` into `out` at `offset`. */
function parseVectorInto(text: string, out: Float32Array, offset: number, dimension: number): void {
  const parts = text.slice(1, -1).split(',');
  if (parts.length !== dimension) throw new Error(`memory index: a stored vector has ${parts.length} components where its collection has ${dimension}`);
  for (let i = 0; i < dimension; i++) out[offset + i] = Number(parts[i]);
}
