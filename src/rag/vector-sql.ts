import { createHash } from 'node:crypto';
import { ClinAgentError } from '../core/errors.js';

/**
 * How a collection's vectors are cast, indexed and compared. rag_chunks.embedding has no fixed dimension
 * (collections may use different models), so every index and query casts it to the collection's dimension;
 * the cast in the query must match the index expression exactly or PostgreSQL will not use the index.
 */
export interface VectorShape {
  dimension: number;
  /** SQL type the column is cast to, e.g. `vector(256)`. */
  type: string;
  /** HNSW operator class for cosine distance, or undefined when no index type supports the dimension. */
  cosineOps?: string;
}

// pgvector's HNSW indexes `vector` up to 2000 dimensions and `halfvec` up to 4000 (e.g. 3072 for
// text-embedding-3-large). Beyond that a collection is searched exactly, which is correct, only slower.
const MAX_VECTOR_INDEX_DIMENSION = 2000;
const MAX_HALFVEC_INDEX_DIMENSION = 4000;
/** pgvector's limit for a stored `vector`. */
const MAX_VECTOR_DIMENSION = 16000;

export function vectorShape(dimension: number): VectorShape {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_VECTOR_DIMENSION) {
    throw new ClinAgentError('EMBEDDING_FAILED', `Embedding dimension ${dimension} is outside what pgvector stores (1 to ${MAX_VECTOR_DIMENSION}). Use a model with a smaller output dimension.`, { dimension });
  }
  if (dimension <= MAX_VECTOR_INDEX_DIMENSION) return { dimension, type: `vector(${dimension})`, cosineOps: 'vector_cosine_ops' };
  if (dimension <= MAX_HALFVEC_INDEX_DIMENSION) return { dimension, type: `halfvec(${dimension})`, cosineOps: 'halfvec_cosine_ops' };
  return { dimension, type: `vector(${dimension})` };
}

/** What clinagent_create_scope_index (migration 0016) accepts as a scenario id; others are searched exactly. */
const INDEXABLE_SCOPE = /^[A-Za-z0-9._:@-]{1,200}$/;

/**
 * A stable index name per scope (collection and scenario) and dimension. Names may differ only in case or in
 * punctuation, so the name is a readable prefix plus a hash, within PostgreSQL's 63-byte identifier limit.
 * Undefined when the scenario id holds characters the owner's function refuses: such a scope is always
 * searched exactly, which is correct, only slower once it is large.
 */
export function scopeIndexName(collection: string, scenarioId: string, dimension: number): string | undefined {
  if (!INDEXABLE_SCOPE.test(scenarioId)) return undefined;
  const slug = `${collection}_${scenarioId}`.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30);
  const digest = createHash('sha256').update(`${collection}\0${scenarioId}\0${dimension}`).digest('hex').slice(0, 12);
  return `rag_scope_${slug}_${digest}`;
}

/**
 * A scenario id as an SQL string literal, for the same reason as collectionLiteral: a partial index's
 * `scenario_id = '<id>'` matches only a literal. Only ids scopeIndexName accepts (no quote, no backslash) are
 * inlined; this checks again.
 */
export function scopeLiteral(scenarioId: string): string {
  if (!INDEXABLE_SCOPE.test(scenarioId)) throw new Error(`scopeLiteral: scenario id ${JSON.stringify(scenarioId)} cannot be inlined`);
  return `'${scenarioId}'`;
}

/**
 * The collection as an SQL string literal. Inlined rather than bound because the planner can only match a
 * partial index's `WHERE collection = '<name>'` against a literal; the name is safe to inline because
 * a query is validated first (validate-input.ts allows only [A-Za-z0-9_-]) and this checks it again.
 */
export function collectionLiteral(collection: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(collection)) throw new Error(`collectionLiteral: unvalidated collection name ${JSON.stringify(collection)}`);
  return `'${collection}'`;
}

/**
 * pgvector's text input. Seven significant digits is all a float4 component holds, and shorter text
 * halves the parse time of bulk inserts.
 */
export function vectorLiteral(vector: readonly number[]): string {
  let out = '[';
  for (let i = 0; i < vector.length; i++) {
    if (i > 0) out += ',';
    out += vector[i] === 0 ? '0' : vector[i]!.toPrecision(7);
  }
  return out + ']';
}
