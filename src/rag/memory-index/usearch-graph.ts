import { createRequire } from 'node:module';

/**
 * One scope's HNSW graph in this process's memory, through usearch (a native library with prebuilt binaries in
 * its npm package, so installing needs no compiler). Keys are rag_chunks.seq.
 */
export interface ScopeGraph {
  readonly dimension: number;
  /** Adds vectors (one row of `dimension` values each) under the keys, on all cores: a blocking native call. */
  add(keys: readonly number[], vectors: Float32Array): void;
  /**
   * The keys of the `count` nearest vectors by cosine distance, nearest first (fewer when the graph is smaller),
   * found with a candidate list of `expansion` (at least `count`).
   */
  search(vector: readonly number[], count: number, expansion: number): number[];
  remove(keys: readonly number[]): void;
  /** Vectors in the graph (removed ones excluded). */
  size(): number;
}

/**
 * Graph parameters, measured on the bench corpus (docs/rag.md): connectivity (m) 16 and expansion_add
 * (ef_construction) 128. The search expansion is chosen per query (searchExpansionFor): usearch walks the graph with
 * a candidate list as long as the number of results asked for, so a query asks for that many and keeps the nearest.
 */
export const GRAPH_PARAMETERS = { connectivity: 16, expansionAdd: 128 } as const;

/**
 * The candidate-list size (ef_search) by the graph's size: the smallest measured to keep recall@10 at 0.95 or more on
 * the bench corpus, near-duplicate protocol text (graph search alone, 60 questions; docs/rag.md):
 * 30 000 chunks: 200 -> 0.953 (0.9 ms), 400 -> 0.965 (1.8 ms); 60 000: 400 -> 0.958-0.978, 600 -> 0.963 (2.4 ms);
 * 180 000: 600 -> 0.948, 800 -> 0.948, 1 200 -> 0.967 (8.6 ms).
 */
const SEARCH_EXPANSION_BY_GRAPH: ReadonlyArray<{ upToChunks: number; expansion: number }> = [
  { upToChunks: 20_000, expansion: 400 },
  { upToChunks: 80_000, expansion: 600 },
  { upToChunks: Infinity, expansion: 1_200 },
];

export function searchExpansionFor(graphChunks: number): number {
  return SEARCH_EXPANSION_BY_GRAPH.find((step) => graphChunks <= step.upToChunks)!.expansion;
}

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
    // The least a query walks with; each asks for its own expansion's worth of results (search below).
    expansion_search: 64,
    multi: false,
  });
  return {
    dimension,
    add(keys, vectors) {
      if (keys.length === 0) return;
      index.add(BigUint64Array.from(keys, (key) => BigInt(key)), vectors, 0);
    },
    search(vector, count, expansion) {
      if (index.size() === 0) return [];
      // One thread: one query is a millisecond or two of work, and a pool would have to be woken for it.
      const found = index.search(Float32Array.from(vector), Math.max(count, expansion), 1);
      return Array.from(found.keys.subarray(0, count), (key) => Number(key));
    },
    remove(keys) {
      if (keys.length) index.remove(BigUint64Array.from(keys, (key) => BigInt(key)));
    },
    size: () => index.size(),
  };
}
