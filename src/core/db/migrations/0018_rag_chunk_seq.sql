-- rag_chunks.seq: a number for every chunk, in the order chunks are written. On the embedded database each large
-- scope's search graph lives in the server's memory (src/rag/memory-index/, docs/rag.md), keyed by seq: it holds
-- every chunk of its scope up to a watermark, and a query compares the chunks above the watermark exactly, found
-- through rag_chunks_scope_seq_idx, which also finds the graph's candidates by seq. Existing chunks are numbered
-- by the ALTER. rag_chunks exists only where pgvector does (0001), hence the condition.
DO $$
BEGIN
  IF to_regclass('public.rag_chunks') IS NOT NULL THEN
    ALTER TABLE public.rag_chunks ADD COLUMN IF NOT EXISTS seq bigint GENERATED ALWAYS AS IDENTITY;
    CREATE INDEX IF NOT EXISTS rag_chunks_scope_seq_idx ON public.rag_chunks (collection, scenario_id, seq);
  END IF;
END
$$;
