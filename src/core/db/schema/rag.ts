import { index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * A collection remembers the embedding model and dimension it was built with, so a query embedded by a
 * different model is refused instead of returning meaningless neighbours.
 */
export const ragCollections = pgTable('rag_collections', {
  name: text('name').primaryKey(),
  embeddingModel: text('embedding_model').notNull(),
  dimension: integer('dimension').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The scope index (collection, scenario) serves the search plan's row count: the sum of chunk_count over a
 * scope's documents, read on every query, is how retrieve() chooses between an exact scan and the scope's
 * HNSW index (src/rag/search-plan.ts).
 */
export const ragDocuments = pgTable('rag_documents', {
  id: text('id').primaryKey(),
  scenarioId: text('scenario_id').notNull(),
  collection: text('collection')
    .notNull()
    .references(() => ragCollections.name),
  sourceFile: text('source_file').notNull(),
  contentHash: text('content_hash').notNull(),
  chunkCount: integer('chunk_count').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (table) => [index('rag_documents_scope_idx').on(table.collection, table.scenarioId)]);

// The chunk table (with its pgvector column) is created by the hand-written migration
// 0001_rag_chunks.sql, because it exists only where the pgvector extension is installed.
// Queries on it are raw SQL in src/rag/.
