import { createRequire } from 'node:module';

/**
 * One scope's HNSW graph in this process's memory, through usearch (a native library with prebuilt binaries in
 * its npm package, so installing needs no compiler). Keys are rag_chunks.seq.
 */
export interface ScopeGraph {
  readonly dimension: number;
  /** Adds vectors (one row of `dimension` values each) under the keys, on all cores: a blocking native call. */
  add(keys: readonly number[], vectors: Float32Array): void;
  /** The keys of the `count` nearest vectors by cosine distance, nearest first; fewer when the graph is smaller. */
  search(vector: readonly number[], count: number): number[];
  remove(keys: readonly number[]): void;
  /** Vectors in the graph (removed ones excluded). */
  size(): number;
}

/**
 * Graph parameters, measured on the bench corpus (docs/rag.md): connectivity 16 and expansion_add 128 reach
 * recall@10 0.95 or more on a 60 000-chunk scope at expansion_search 400 in about 2 ms; usearch fixes the search
 * expansion when the graph is made, so it is the one that holds for the largest scopes.
 */
export const GRAPH_PARAMETERS = { connectivity: 16, expansionAdd: 128, expansionSearch: 400 } as const;

interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  search(vector: Float32Array, k: number, threads?: number): { keys: BigUint64Array; distances: Float32Array };
  remove(keys: BigUint64Array): unknown;
  size(): number;
}
export interface UsearchModule {
  Index: new (config: { metric: string; connectivity: number; dimensions: number; quantization: string; expansion_add: number; expansion_search: number; multi: boolean }) => UsearchIndex;
}

let loaded: { module?: UsearchModule; error?: string } | undefined;

/** usearch, or why it could not be loaded (a platform without a prebuilt binary): the caller falls back to pgvector. */
export function loadGraphLibrary(): { module?: UsearchModule; error?: string } {
  if (!loaded) {
    try {
      loaded = { module: createRequire(import.meta.url)('usearch') as UsearchModule };
    } catch (error) {
      loaded = { error: error instanceof Error ? error.message : String(error) };
    }
  }
  return loaded;
}

export function createScopeGraph(library: UsearchModule, dimension: number): ScopeGraph {
  const index = new library.Index({
    metric: 'cos',
    connectivity: GRAPH_PARAMETERS.connectivity,
    dimensions: dimension,
    quantization: 'f32',
    expansion_add: GRAPH_PARAMETERS.expansionAdd,
    expansion_search: GRAPH_PARAMETERS.expansionSearch,
    multi: false,
  });
  return {
    dimension,
    add(keys, vectors) {
      if (keys.length === 0) return;
      index.add(BigUint64Array.from(keys, (key) => BigInt(key)), vectors, 0);
    },
    search(vector, count) {
      if (index.size() === 0) return [];
      // One thread: a single query is microseconds of work, less than waking a pool.
      const found = index.search(Float32Array.from(vector), count, 1);
      return Array.from(found.keys, (key) => Number(key));
    },
    remove(keys) {
      if (keys.length) index.remove(BigUint64Array.from(keys, (key) => BigInt(key)));
    },
    size: () => index.size(),
  };
}
