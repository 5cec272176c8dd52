import { ClinAgentError } from '../core/errors.js';

export function vectorStoreUnavailable(): ClinAgentError {
  return new ClinAgentError(
    'VECTOR_STORE_UNAVAILABLE',
    'This PostgreSQL database has no pgvector extension, so RAG is unavailable. Install pgvector on the server (e.g. apt-get install postgresql-15-pgvector) and create a fresh database, or use the embedded database (unset DATABASE_URL).',
  );
}

interface EmbeddingIdentity {
  model: string;
  dimension: number;
}

/**
 * Vectors from two models (or two dimensions) live in unrelated spaces: comparing them returns confident
 * nonsense, so the store refuses and says how to get back to a consistent state.
 */
function embeddingMismatch(collection: string, recorded: EmbeddingIdentity, current: EmbeddingIdentity): ClinAgentError {
  return new ClinAgentError(
    'EMBEDDING_MISMATCH',
    `Collection "${collection}" was built with embedding model "${recorded.model}" (${recorded.dimension} dimensions), but the current embedder is "${current.model}" (${current.dimension || 'unknown'} dimensions). ` +
      `Vectors from different models cannot be compared. Either switch back to "${recorded.model}" (EMBEDDING_MODEL; unset it for the built-in local embedder), ` +
      `or ingest the documents again into a new collection and search that one.`,
    { collection, recordedModel: recorded.model, recordedDimension: recorded.dimension, currentModel: current.model, currentDimension: current.dimension },
  );
}

/** Throws EMBEDDING_MISMATCH unless `current` matches the collection; a dimension of 0 means not yet known. */
export function assertSameEmbedding(collection: string, recorded: EmbeddingIdentity, current: EmbeddingIdentity): void {
  if (recorded.model !== current.model || (current.dimension !== 0 && recorded.dimension !== current.dimension)) {
    throw embeddingMismatch(collection, recorded, current);
  }
}

export function documentInOtherScope(documentId: string, stored: { scenarioId: string; collection: string }, requested: { scenarioId: string; collection: string }): ClinAgentError {
  return new ClinAgentError(
    'CONFLICT_STATE',
    `Document "${documentId}" already belongs to scenario "${stored.scenarioId}", collection "${stored.collection}"; it cannot be re-ingested into scenario "${requested.scenarioId}", collection "${requested.collection}". ` +
      'Use a new documentId (or omit it), or delete the existing document first.',
    { documentId, storedScenarioId: stored.scenarioId, storedCollection: stored.collection, scenarioId: requested.scenarioId, collection: requested.collection },
  );
}
