import { describe, expect, it } from 'vitest';
import { createEmbedder } from './create-embedder.js';

const llm = { timeoutMs: 1_000, maxRetries: 0 };

describe('createEmbedder', () => {
  it('uses the offline local embedder when no embedding model is configured', () => {
    expect(createEmbedder({}, llm)).toMatchObject({ model: 'local-hash-ngram-v1', dimension: 256 });
  });

  it('uses the OpenAI-compatible endpoint when a model is configured; its dimension is unknown until it answers', () => {
    expect(createEmbedder({ model: 'text-embedding-v3', baseUrl: 'http://127.0.0.1:9/v1' }, llm)).toMatchObject({ model: 'text-embedding-v3', dimension: 0 });
  });

  it('refuses a model without an endpoint, naming the variable to set', () => {
    expect(() => createEmbedder({ model: 'text-embedding-v3' }, llm)).toThrow(expect.objectContaining({ code: 'CONFIG_MISSING', message: expect.stringContaining('EMBEDDING_BASE_URL') }));
  });
});
