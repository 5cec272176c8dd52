import OpenAI from 'openai';
import { ClinAgentError } from './errors.js';
import { llmError, toLlmError } from './llm/errors.js';

/**
 * Turns texts into vectors. `model` is recorded on every RAG collection, so it must change whenever the
 * vectors would (a different model, or a different dimension of the same hashing scheme).
 *
 * `dimension` is 0 while unknown: a remote model's dimension is only learnt from its first answer. Callers
 * (the RAG store) therefore take the dimension from the vectors they get back, and use `dimension` only as
 * an early check once it is non-zero.
 */
export interface Embedder {
  readonly model: string;
  readonly dimension: number;
  embed(texts: string[]): Promise<number[][]>;
}

export interface OpenAiEmbedderConfig {
  apiKey?: string;
  baseUrl: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  /** Texts per request. */
  batchSize?: number;
}

/**
 * DashScope's OpenAI-compatible embedding endpoint (text-embedding-v3/v4) refuses more than 10 inputs per
 * request; OpenAI accepts 2048. 10 works everywhere, and a few requests run side by side to make up for it.
 */
const DEFAULT_BATCH_SIZE = 10;
/** Enough parallel requests to hide latency without tripping per-key rate limits on small plans. */
const CONCURRENT_REQUESTS = 4;

/**
 * Embeddings through any OpenAI-compatible `/v1/embeddings` endpoint, via the official `openai` client, which
 * owns timeouts and retries (one retry policy, as for chat). Every answer is checked: one vector per input,
 * all of one dimension, and the same dimension as earlier answers, because a silently wrong vector would
 * poison a collection for good.
 */
export function createOpenAiEmbedder(config: OpenAiEmbedderConfig, options: { fetch?: typeof fetch } = {}): Embedder {
  const batchSize = config.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new ClinAgentError('CONFIG_INVALID', `Embedding batchSize must be a whole number of at least 1, got ${String(config.batchSize)}.`, { field: 'batchSize' });
  }
  const client = new OpenAI({
    baseURL: config.baseUrl,
    // Local servers (vLLM, Ollama, TEI) accept any key; the client insists on one being present.
    apiKey: config.apiKey ?? 'not-needed',
    timeout: config.timeoutMs,
    maxRetries: config.maxRetries,
    fetch: options.fetch,
  });
  let dimension = 0;

  function fail(message: string, details: Record<string, unknown> = {}): ClinAgentError {
    // Whoever searched reads what went wrong; the endpoint's address is for the operator's log and trace only.
    return llmError('EMBEDDING_FAILED', `The embedding service ${message}`, `The embedding endpoint ${config.baseUrl} (model "${config.model}") ${message}`, { model: config.model, ...details });
  }

  async function embedBatch(batch: string[]): Promise<number[][]> {
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      // 'float' explicitly: the client would otherwise ask for base64, which several compatible servers lack.
      response = await client.embeddings.create({ model: config.model, input: batch, encoding_format: 'float' });
    } catch (error) {
      throw toLlmError(error, { ...config, what: 'embedding' });
    }
    const data = Array.isArray(response?.data) ? [...response.data] : [];
    if (data.length !== batch.length) {
      throw fail(`returned ${data.length} vectors for ${batch.length} texts. Check that the server supports batched input, or lower the embedding batch size.`, { expected: batch.length, received: data.length });
    }
    // Servers may answer out of order; `index` says which input each vector belongs to.
    data.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return data.map((item, position) => {
      const vector = item.embedding as unknown;
      if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw fail(`returned an empty or non-numeric vector for input ${position}. Check that the model is an embedding model.`, { position });
      }
      return vector as number[];
    });
  }

  function checkDimensions(vectors: number[][]): void {
    const first = vectors[0]?.length ?? 0;
    const expected = dimension || first;
    const odd = vectors.findIndex((vector) => vector.length !== expected);
    if (odd >= 0) {
      throw fail(`returned vectors of different dimensions (${expected} and ${vectors[odd]!.length}). Pin the model's output dimension on the server, or use another model.`, { expected, received: vectors[odd]!.length });
    }
    dimension = expected;
  }

  return {
    model: config.model,
    get dimension() {
      return dimension;
    },
    async embed(texts) {
      if (texts.length === 0) return [];
      const batches: string[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) batches.push(texts.slice(i, i + batchSize));
      const results: number[][][] = new Array(batches.length);
      let next = 0;
      async function worker(): Promise<void> {
        while (next < batches.length) {
          const at = next++;
          try {
            results[at] = await embedBatch(batches[at]!);
          } catch (error) {
            next = batches.length; // stop the other workers: the whole call fails anyway
            throw error;
          }
        }
      }
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_REQUESTS, batches.length) }, worker));
      const vectors = results.flat();
      checkDimensions(vectors);
      return vectors;
    },
  };
}
