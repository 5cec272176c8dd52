-- Chunks with their embeddings. Created only where the pgvector extension can be installed: the embedded
-- PGlite always has it; a PostgreSQL server without pgvector still runs every other part of ClinAgent, and
-- RAG calls then fail with VECTOR_STORE_UNAVAILABLE, which says how to install it.
-- The embedding column has no fixed dimension because each collection may use a different model; each
-- collection gets its own partial HNSW index on `embedding::vector(<dim>)` when it is created.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE IF NOT EXISTS rag_chunks (
      document_id text NOT NULL REFERENCES rag_documents(id) ON DELETE CASCADE,
      chunk_index integer NOT NULL,
      scenario_id text NOT NULL,
      collection text NOT NULL,
      content text NOT NULL,
      start_offset integer NOT NULL,
      end_offset integer NOT NULL,
      embedding vector NOT NULL,
      PRIMARY KEY (document_id, chunk_index)
    );
    CREATE INDEX IF NOT EXISTS rag_chunks_scope_idx ON rag_chunks (collection, scenario_id, document_id);
  END IF;
END
$$;
