import type { Jobs } from '../../../core/jobs/boss.js';
import type { IngestResult, RagStore } from '../../../rag/index.js';
import { requestScopeIndex, type ScopeIndexRequest } from '../../../runtime/scope-index-job.js';
import { KNOWLEDGE_BASES, loadKnowledgeArticles, type Specialty } from './articles.js';

interface KnowledgeIngestResult {
  documents: IngestResult[];
  /** Documents of this knowledge base whose article is no longer shipped, deleted so they are never cited. */
  removed: string[];
  /** The search index build asked for when a section was added or changed; undefined when none was. */
  index?: ScopeIndexRequest;
}

/**
 * Ingests the shipped dermatology articles into their own scope and collection, for the lead's start-up to call
 * (after the vector store is known to exist: the store throws VECTOR_STORE_UNAVAILABLE otherwise). Idempotent:
 * document ids derive from the file names and section positions and the store compares content hashes, so an unchanged article is
 * neither re-embedded nor rewritten, and a section or article removed from the folder is removed from the store.
 * Changed sections are then indexed by the background job (`jobs`), or here without a job queue.
 */
export async function ingestConsultKnowledge(rag: RagStore, options: { specialty?: Specialty; folder?: string; jobs?: Jobs } = {}): Promise<KnowledgeIngestResult> {
  const specialty = options.specialty ?? 'dermatology';
  const { scope, collection } = KNOWLEDGE_BASES[specialty];
  const articles = await loadKnowledgeArticles(specialty, options.folder);
  const documents: IngestResult[] = [];
  for (const article of articles) {
    for (const section of article.sections) {
      documents.push(await rag.ingestDocument({ documentId: section.documentId, scenarioId: scope, sourceFile: article.sourceFile, text: section.text, collection }));
    }
  }
  const shipped = new Set(articles.flatMap((article) => article.sections.map((section) => section.documentId)));
  const removed: string[] = [];
  for (const stored of await rag.listDocuments({ scenarioId: scope })) {
    if (shipped.has(stored.documentId)) continue;
    await rag.deleteDocument(stored.documentId);
    removed.push(stored.documentId);
  }
  // Removed sections leave the index with their rows; only added or changed ones have chunks to index.
  const index = documents.some((document) => !document.unchanged) ? await requestScopeIndex({ rag, jobs: options.jobs }, { scenarioId: scope, collection }) : undefined;
  return { documents, removed, ...(index ? { index } : {}) };
}
