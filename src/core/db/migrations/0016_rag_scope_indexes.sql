-- Retrieval that never waits for an index build (docs/rag.md). Until this migration each collection had one
-- partial HNSW index, created on first use by whichever call came first, a query included: at 100 000 chunks the
-- first query waited over six minutes. Now:
-- * rag_documents_scope_idx: the search plan reads a scope's size (the sum of its documents' chunk_count) on
--   every query, to choose between an exact scan of the scope and the scope's own index.
CREATE INDEX "rag_documents_scope_idx" ON "rag_documents" USING btree ("collection","scenario_id");--> statement-breakpoint
-- * rag_chunks.indexed: a chunk is written unindexed (cheap, so ingestion is fast) and the background ingest job
--   sets the flag in short batches, which inserts it into its scope's HNSW index, whose predicate includes
--   `indexed`. A query searches the indexed part through the index and the unindexed rest exactly
--   (rag_chunks_unindexed_idx finds it), so it is always complete and never waits for the index.
-- * The collection-wide HNSW indexes go: one index per large scope (collection and scenario) keeps a 1 % or 10 %
--   scope's recall as high as a whole collection's, where a shared index lost it to the scenario filter. Their
--   collections are searched exactly until the ingest job (run at every start) has built the scope indexes.
-- rag_chunks exists only where pgvector does (0001), hence the condition.
DO $$
DECLARE
  old_index record;
BEGIN
  IF to_regclass('public.rag_chunks') IS NOT NULL THEN
    FOR old_index IN SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'rag_chunks' AND indexname LIKE 'rag\_hnsw\_%' LOOP
      EXECUTE format('DROP INDEX public.%I', old_index.indexname);
    END LOOP;
    ALTER TABLE public.rag_chunks ADD COLUMN IF NOT EXISTS indexed boolean NOT NULL DEFAULT false;
    CREATE INDEX IF NOT EXISTS rag_chunks_unindexed_idx ON public.rag_chunks (collection, scenario_id) WHERE NOT indexed;
  END IF;
END
$$;--> statement-breakpoint
-- As clinagent_create_collection_index (0005): only the table's owner may index it, and the application role is
-- not the owner (docs/database-roles.md), so this runs as the migrating role and checks every part first. The
-- index is created over the rows already flagged `indexed` (none for a new scope, so it returns at once); rows
-- join it as the ingest job flags them. m = 16, ef_construction = 64 are pgvector's defaults and were measured
-- against smaller graphs (bench/rag.bench.ts, docs/rag.md).
CREATE FUNCTION clinagent_create_scope_index(index_name text, collection text, scenario_id text, vector_type text, opclass text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
  IF index_name !~ '^rag_scope_[a-z0-9_]{1,50}$' OR collection !~ '^[A-Za-z0-9_-]{1,64}$' OR scenario_id !~ '^[A-Za-z0-9._:@-]{1,200}$'
     OR vector_type !~ '^(vector|halfvec)\([1-9][0-9]{0,4}\)$' OR opclass NOT IN ('vector_cosine_ops', 'halfvec_cosine_ops') THEN
    RAISE EXCEPTION 'clinagent_create_scope_index: refused index %, collection %, scenario %, type %, operator class %', index_name, collection, scenario_id, vector_type, opclass
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON public.rag_chunks USING hnsw ((embedding::%s) %s) WITH (m = 16, ef_construction = 64) WHERE collection = %L AND scenario_id = %L AND indexed',
    index_name, vector_type, opclass, collection, scenario_id);
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION clinagent_create_scope_index(text, text, text, text, text) FROM PUBLIC;--> statement-breakpoint
-- Whoever may build collection indexes (the application role, granted by clinagent_grant_app_role) may build
-- scope indexes; a role granted later gets both through the wrapper below.
DO $$
DECLARE
  grantee record;
BEGIN
  FOR grantee IN
    SELECT DISTINCT r.rolname FROM pg_proc p, aclexplode(p.proacl) a JOIN pg_roles r ON r.oid = a.grantee
    WHERE p.proname = 'clinagent_create_collection_index' AND a.privilege_type = 'EXECUTE' AND r.rolname <> current_user
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION public.clinagent_create_scope_index(text, text, text, text, text) TO %I', grantee.rolname);
  END LOOP;
END
$$;--> statement-breakpoint
-- clinagent_grant_app_role (0005) keeps its body and name for administrators: renamed, and wrapped by one that
-- also grants the new function.
ALTER FUNCTION clinagent_grant_app_role(name) RENAME TO clinagent_grant_app_role_0005;--> statement-breakpoint
CREATE FUNCTION clinagent_grant_app_role(app_role name DEFAULT 'clinagent_app') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  outcome text;
BEGIN
  outcome := clinagent_grant_app_role_0005(app_role);
  IF outcome LIKE 'granted%' THEN
    EXECUTE format('GRANT EXECUTE ON FUNCTION public.clinagent_create_scope_index(text, text, text, text, text) TO %I', app_role);
  END IF;
  RETURN outcome;
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION clinagent_grant_app_role(name) FROM PUBLIC;
