import type { IngestResult, RagStore } from '../../../rag/index.js';
import { KNOWLEDGE_BASES, loadKnowledgeArticles, type Specialty } from './articles.js';

interface KnowledgeIngestResult {
  documents: IngestResult[];
  /** Documents of this knowledge base whose article is no longer shipped, deleted so they are never cited. */
  removed: string[];
}

/**
 * Ingests the shipped dermatology articles into their own scope and collection, for the lead's start-up to call
 * (after the vector store is known to exist: the store throws VECTOR_STORE_UNAVAILABLE otherwise). Idempotent:
 * document ids derive from the file names and section positions and the store compares content hashes, so an unchanged article is
 * neither re-embedded nor rewritten, and a section or article removed from the folder is removed from the store.
 */
export async function ingestConsultKnowledge(rag: RagStore, options: { specialty?: Specialty; folder?: string } = {}): Promise<KnowledgeIngestResult> {
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
  return { documents, removed };
}
