import { z } from 'zod';
import { ClinAgentError } from '../../../core/errors.js';
import type { ToolDefinition } from '../../../core/tools/registry.js';
import type { RagStore, ReferenceChunk } from '../../../rag/index.js';
import { KNOWLEDGE_BASES, loadKnowledgeArticles, resolveSpecialty, type KnowledgeArticle, type Specialty } from './articles.js';

/** Passages (article sections) answered per search: a condition and its main differentials, small enough for a prompt. */
const MAX_PASSAGES = 4;
/** A second section of one article adds detail; a third crowds out the differentials. */
const MAX_PASSAGES_PER_ARTICLE = 2;

const Args = z.object({
  query: z
    .string()
    .trim()
    .min(1, 'say what to look up, e.g. "itchy ring-shaped rash with scaling" or "湿疹的典型症状"')
    .max(1000)
    .describe('what to look up, in English or Chinese: symptoms, a condition, its red flags or treatment'),
  specialty: z.string().default('dermatology').describe('the knowledge base to search; only "dermatology" (皮肤科) is available'),
});
type Args = z.infer<typeof Args>;

export interface KnowledgePassage {
  /** The article's title, English with the Chinese name. */
  title: string;
  /** Where the article's facts come from (its Source line). */
  source: string;
  text: string;
  /** Cosine similarity to the query, 0 to 1, three decimals. */
  score: number;
}

/**
 * `search_medical_knowledge(query, specialty = 'dermatology')` (seed 003 section 3): the shipped articles through
 * the Agent Core RAG store, each passage with its article's title and source so the consult can say where a fact
 * comes from. Failures say what the consult should do instead of retrying.
 */
export function createMedicalKnowledgeTool(rag: RagStore, options: { folder?: string } = {}): ToolDefinition<Args> {
  const catalogues = new Map<Specialty, Promise<Map<string, KnowledgeArticle>>>();

  function catalogue(specialty: Specialty): Promise<Map<string, KnowledgeArticle>> {
    let loaded = catalogues.get(specialty);
    if (!loaded) {
      loaded = loadKnowledgeArticles(specialty, options.folder).then(
        (articles) => new Map(articles.flatMap((article) => article.sections.map((section) => [section.documentId, article] as const))),
      );
      // A failed read is retried on the next search rather than remembered.
      loaded.catch(() => catalogues.delete(specialty));
      catalogues.set(specialty, loaded);
    }
    return loaded;
  }

  return {
    name: 'search_medical_knowledge',
    description:
      'Search the dermatology knowledge base (short articles on common skin conditions: typical features, where and who, differentials, red flags, first-line management, when to refer) and return the best passages, each with its article title and source to cite.',
    schema: Args,
    async run({ query, specialty: asked }) {
      const specialty = resolveSpecialty(asked);
      if (!specialty) {
        throw new ClinAgentError(
          'VALIDATION_FAILED',
          `There is no "${asked}" knowledge base: only dermatology (皮肤科) is available. Search again with specialty "dermatology", or continue the consult from the patient's answers.`,
          { field: 'specialty', supported: Object.keys(KNOWLEDGE_BASES) },
        );
      }
      const { scope, collection } = KNOWLEDGE_BASES[specialty];
      const hits = await retrieve(rag, { scenarioId: scope, collection, query, topK: MAX_PASSAGES * MAX_PASSAGES_PER_ARTICLE });
      if (hits.length === 0) {
        throw new ClinAgentError(
          'NOT_FOUND',
          `The ${specialty} knowledge base has no articles on this server yet (they are loaded at start-up). Continue the consult without it, from the patient's answers; do not quote it.`,
          { specialty },
        );
      }
      const articles = await catalogue(specialty);
      return { query, specialty, results: bestPassages(hits, articles) };
    },
  };
}

async function retrieve(rag: RagStore, query: Parameters<RagStore['retrieve']>[0]): Promise<ReferenceChunk[]> {
  try {
    return await rag.retrieve(query);
  } catch (error) {
    if (ClinAgentError.isInstance(error) && error.code === 'VECTOR_STORE_UNAVAILABLE') {
      throw new ClinAgentError(
        'VECTOR_STORE_UNAVAILABLE',
        "The medical knowledge base cannot be searched on this server: its database has no vector store (pgvector). Continue the consult without it, from the patient's answers; do not search it again in this consult.",
        {},
        { cause: error },
      );
    }
    throw error;
  }
}

/** Best first, at most MAX_PASSAGES_PER_ARTICLE per article; a passage of an article no longer shipped is never cited. */
function bestPassages(hits: ReferenceChunk[], articles: Map<string, KnowledgeArticle>): KnowledgePassage[] {
  const perArticle = new Map<string, number>();
  const passages: KnowledgePassage[] = [];
  for (const hit of hits) {
    const article = articles.get(hit.documentId);
    const count = article ? (perArticle.get(article.sourceFile) ?? 0) : 0;
    if (!article || count === MAX_PASSAGES_PER_ARTICLE) continue;
    perArticle.set(article.sourceFile, count + 1);
    passages.push({ title: article.title, source: article.source, text: hit.content, score: Math.round(hit.score * 1000) / 1000 });
    if (passages.length === MAX_PASSAGES) break;
  }
  return passages;
}
