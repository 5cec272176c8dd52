/**
 * How retrieve() searches a scope (one scenario's chunks in one collection), chosen by the scope's size, which
 * the store reads from its documents' chunk counts on every query:
 * - exact: every chunk of the scope compared (the scope b-tree, then a sort). Recall 1, and for a small scope
 *   faster than any index: at 100 000 chunks a 1 % scope takes ~1 ms this way.
 * - index: the scope's own HNSW index for the chunks it holds, plus an exact comparison of the chunks the ingest
 *   job has not added to it yet. One index per scope, rather than one per collection filtered by scenario, keeps
 *   a 10 % scope's recall as high as the whole collection's: a filtered graph walk loses neighbours to the filter.
 * The figures behind the constants are in docs/rag.md and come from `npm run bench:rag`.
 */

/**
 * Below this many chunks a scope has no index and is searched exactly. Measured on PGlite at 100 000 chunks
 * (bench/rag.bench.ts): the exact scan of a scope costs ~1.8 microseconds a chunk (1 000 chunks 1.2 ms, 10 000
 * chunks 17.6 ms) and the scope index answers in ~4-6 ms at recall 0.95 or more, so the two meet near 3 000;
 * below it an index would cost its upkeep and buy nothing.
 */
export const MIN_INDEXED_SCOPE_CHUNKS = 3_000;

/**
 * HNSW candidate-list size by the size of the scope's graph, the smallest measured to keep recall@10 at or
 * above 0.95 on the bench corpus (near-duplicate protocol text, a hard case); larger graphs need more candidates.
 */
const EF_SEARCH_BY_SCOPE: ReadonlyArray<{ upToChunks: number; efSearch: number }> = [
  // 10k-chunk scope at 100k chunks: ef 100 -> 0.955 (2.8 ms), 200 -> 0.982 (3.7 ms), 400 -> 0.995 (5.4 ms)
  { upToChunks: 20_000, efSearch: 200 },
  // 60k-chunk scope: ef 200 -> 0.935-0.963, 300 -> 0.950-0.975 (runs differ by 0.02 over 40 queries), 400 -> 0.972
  // (10.1 ms); 400 keeps 0.95 with a margin; 180k-chunk scope at 300k chunks: 400 -> 0.967 (22.6 ms).
  { upToChunks: Infinity, efSearch: 400 },
];

export type SearchPlan = { kind: 'exact' } | { kind: 'index'; efSearch: number };

/** Whether the ingest job should give this scope an index (and keep it current). */
export function wantsScopeIndex(scopeChunks: number, indexFromChunks = MIN_INDEXED_SCOPE_CHUNKS): boolean {
  return scopeChunks >= indexFromChunks;
}

/** The candidate-list size for a scope of this size, and never below 2 x topK. */
export function efSearchFor(scopeChunks: number, topK: number): number {
  const { efSearch } = EF_SEARCH_BY_SCOPE.find((step) => scopeChunks <= step.upToChunks)!;
  return Math.max(efSearch, 2 * topK);
}

/**
 * `scopeChunks` is the scope's size (its index's graph), `searchedChunks` that of what the query searches: the
 * given documents when it names some, searched exactly when few, else through the index with an iterative scan.
 * The index is used only when it exists: a query never creates one, so a scope whose index the ingest job has not
 * built yet is searched exactly, whatever its size.
 */
export function chooseSearchPlan(input: { scopeChunks: number; searchedChunks: number; indexExists: boolean; topK: number; indexFromChunks?: number }): SearchPlan {
  if (!input.indexExists || input.searchedChunks < (input.indexFromChunks ?? MIN_INDEXED_SCOPE_CHUNKS)) return { kind: 'exact' };
  return { kind: 'index', efSearch: efSearchFor(input.scopeChunks, input.topK) };
}
