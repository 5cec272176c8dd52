import type { Jobs } from '../core/jobs/boss.js';
import { indexScopeQueue } from '../core/jobs/queues.js';
import type { RagStore, SearchScope } from '../rag/index.js';

/** What became of a request: a job queued, one already waiting (it indexes these chunks too), or indexed here. */
export type ScopeIndexRequest = 'queued' | 'already-queued' | 'indexed';

/**
 * After a writer stored chunks of a scope (a project's protocol documents, the consult knowledge base), has its
 * search index built or extended off the request: chunks are written outside any index and searched exactly
 * until then, which is correct but slows down once the scope is large. One waiting job per scope (the queue is
 * short-policy, keyed here), so a burst of uploads queues one build. Without a job queue (a one-shot command's
 * context) the scope is indexed here, as `clinagent ingest` does for a scenario; below the store's threshold
 * that is a few catalogue queries.
 */
export async function requestScopeIndex(deps: { rag: RagStore; jobs?: Jobs }, scope: SearchScope): Promise<ScopeIndexRequest> {
  const payload = { collection: scope.collection, scenarioId: scope.scenarioId };
  if (!deps.jobs) {
    await deps.rag.indexScope(payload);
    return 'indexed';
  }
  const id = await deps.jobs.send(indexScopeQueue, payload, { singletonKey: scopeKey(payload) });
  return id === null ? 'already-queued' : 'queued';
}

/**
 * Requests the build of every stored scope (but those `skip` names) whose index is due and not finished: after the
 * 0016 upgrade, which left every chunk unindexed, or when a process stopped between an upload and its job. A
 * scope below the store's threshold, or indexed already, costs its status queries only. Returns the scopes asked for.
 */
export async function requestUnfinishedScopeIndexes(deps: { rag: RagStore; jobs: Jobs }, options: { skip?: (scope: SearchScope) => boolean } = {}): Promise<SearchScope[]> {
  // Each scope's size from its documents' chunk counts, so that, at every start, only scopes large enough for an
  // index cost their status queries: largest first, and the walk stops at the first one below the threshold.
  const scopes = new Map<string, SearchScope & { chunks: number }>();
  for (const { collection, scenarioId, chunkCount } of await deps.rag.listDocuments()) {
    const key = scopeKey({ collection, scenarioId });
    const scope = scopes.get(key) ?? { collection, scenarioId, chunks: 0 };
    scope.chunks += chunkCount;
    scopes.set(key, scope);
  }
  const requested: SearchScope[] = [];
  let threshold = 0;
  for (const { chunks, ...scope } of [...scopes.values()].sort((a, b) => b.chunks - a.chunks)) {
    if (chunks < threshold) break;
    if (options.skip?.(scope)) continue;
    const status = await deps.rag.indexStatus(scope);
    threshold = status.indexFromChunks;
    if (status.chunks < status.indexFromChunks || status.state === 'ready') continue;
    await requestScopeIndex(deps, scope);
    requested.push(scope);
  }
  return requested;
}

/** Collection names allow no newline, so the pair is unambiguous. */
const scopeKey = (scope: SearchScope): string => `${scope.collection}\n${scope.scenarioId}`;
