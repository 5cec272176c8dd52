import type { EmbeddingConfig } from '../core/config.js';
import { createOpenAiEmbedder, type Embedder } from '../core/embeddings.js';
import { ClinAgentError } from '../core/errors.js';
import { createLocalEmbedder } from './local-embedder.js';

/**
 * The embedder the configuration asks for: the offline local one when EMBEDDING_MODEL is unset, otherwise
 * the OpenAI-compatible endpoint, with the LLM gateway's timeout and retry count.
 */
export function createEmbedder(config: EmbeddingConfig, llm: { timeoutMs: number; maxRetries: number }): Embedder {
  if (!config.model) return createLocalEmbedder();
  if (!config.baseUrl) {
    throw new ClinAgentError(
      'CONFIG_MISSING',
      'EMBEDDING_MODEL is set but there is no endpoint for it. Set EMBEDDING_BASE_URL (or LLM_BASE_URL), e.g. http://127.0.0.1:8000/v1, or unset EMBEDDING_MODEL to use the offline local embedder.',
      { field: 'EMBEDDING_BASE_URL' },
    );
  }
  return createOpenAiEmbedder({ apiKey: config.apiKey, baseUrl: config.baseUrl, model: config.model, timeoutMs: llm.timeoutMs, maxRetries: llm.maxRetries });
}
