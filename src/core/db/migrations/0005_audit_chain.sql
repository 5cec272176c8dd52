-- The audit trail as a hash chain. The append-only trigger (0003) stops mistakes, but a superuser can switch
-- triggers off (session_replication_role) and a table owner can disable them, and PGlite's only role is a
-- superuser. So each entry also stores the hash of the entry before it (per project) and its own sha256 over a
-- canonical form of its content: an entry altered, deleted or slipped in past the chain no longer matches, and
-- verifyAuditChain (`clinagent audit verify`, GET .../audit/verify) names the first one that does not.
ALTER TABLE "audit_log" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "hash" text;--> statement-breakpoint
CREATE INDEX "audit_log_chain_idx" ON "audit_log" USING btree ("project_id","id");--> statement-breakpoint
-- The canonical form is a jsonb array: jsonb's text output is deterministic (one spelling per value, object
-- keys sorted), so the same entry hashes the same on PGlite and PostgreSQL. The time is written in UTC so the
-- session's TimeZone cannot change it.
CREATE FUNCTION audit_log_entry_hash(text, bigint, text, text, text, text, text, timestamptz, jsonb, jsonb, text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
  SELECT encode(sha256(convert_to(jsonb_build_array($1, $2, $3, $4, $5, $6, $7,
    to_char($8 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), $9, $10, $11)::text, 'UTF8')), 'hex')
$$;--> statement-breakpoint
-- Existing entries are chained in id order, project by project. The append-only trigger is off for this one
-- transaction only (the migrating role owns the table).
ALTER TABLE "audit_log" DISABLE TRIGGER audit_log_append_only;--> statement-breakpoint
DO $$
DECLARE
  entry record;
  previous text;
  chain text;
BEGIN
  FOR entry IN SELECT * FROM audit_log ORDER BY project_id, id LOOP
    IF chain IS DISTINCT FROM entry.project_id THEN
      chain := entry.project_id;
      previous := repeat('0', 64);
    END IF;
    UPDATE audit_log SET prev_hash = previous,
      hash = audit_log_entry_hash(previous, entry.id, entry.project_id, entry.entity_type, entry.entity_id, entry.action, entry.actor, entry.at, entry.old_value, entry.new_value, entry.reason)
    WHERE id = entry.id
    RETURNING hash INTO previous;
  END LOOP;
END
$$;--> statement-breakpoint
ALTER TABLE "audit_log" ENABLE TRIGGER audit_log_append_only;--> statement-breakpoint
ALTER TABLE "audit_log" ALTER COLUMN "prev_hash" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log" ALTER COLUMN "hash" SET NOT NULL;--> statement-breakpoint
-- Every insert path (appendAudit, raw SQL in a migration, a psql session) goes through this trigger, which
-- replaces whatever id, time and hashes the writer supplied:
-- - One chain per project, serialised by a transaction-scoped advisory lock (two-key form, first key ours),
--   so two concurrent writers never link to the same previous entry.
-- - The id is drawn under that lock, so id order is chain order and a verifier can walk the chain by id.
-- - The time is the server's, so an entry cannot be backdated.
-- - The previous entry is read with a fresh snapshot after the lock is granted, which READ COMMITTED gives
--   and REPEATABLE READ does not (it would not see the entry committed while we waited); so those are refused.
-- search_path is fixed and names are qualified so a session's own search_path cannot swap in other objects.
CREATE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
  previous text;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'audit_log entries must be written at READ COMMITTED isolation, not %: the hash chain needs to see the entry committed just before', current_setting('transaction_isolation')
      USING ERRCODE = 'feature_not_supported';
  END IF;
  PERFORM pg_advisory_xact_lock(720417005, hashtext(NEW.project_id));
  NEW.id := nextval('public.audit_log_id_seq'::regclass);
  NEW.at := now();
  SELECT a.hash INTO previous FROM public.audit_log a WHERE a.project_id = NEW.project_id ORDER BY a.id DESC LIMIT 1;
  NEW.prev_hash := coalesce(previous, repeat('0', 64));
  NEW.hash := public.audit_log_entry_hash(NEW.prev_hash, NEW.id, NEW.project_id, NEW.entity_type, NEW.entity_id, NEW.action, NEW.actor, NEW.at, NEW.old_value, NEW.new_value, NEW.reason);
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_chain();--> statement-breakpoint
-- The trigger draws every id; a column default would draw a second, unused one per entry and leave gaps.
ALTER TABLE "audit_log" ALTER COLUMN "id" DROP DEFAULT;--> statement-breakpoint
-- RAG builds one partial HNSW index per collection on first use and analyses rag_chunks after large writes
-- (src/rag/collection-indexes.ts, chunk-statistics.ts). Both need the table's owner, which the application role
-- is not, so these two functions run as the migrating role (SECURITY DEFINER) and do exactly that, every part
-- of the statement checked first. The application role may execute them and nothing else of the owner's.
CREATE FUNCTION clinagent_create_collection_index(index_name text, collection text, vector_type text, opclass text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
  IF index_name !~ '^rag_hnsw_[a-z0-9_]{1,50}$' OR collection !~ '^[A-Za-z0-9_-]{1,64}$'
     OR vector_type !~ '^(vector|halfvec)\([1-9][0-9]{0,4}\)$' OR opclass NOT IN ('vector_cosine_ops', 'halfvec_cosine_ops') THEN
    RAISE EXCEPTION 'clinagent_create_collection_index: refused index %, collection %, type %, operator class %', index_name, collection, vector_type, opclass
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- m = 16, ef_construction = 64 are pgvector's defaults, stated so a future change is a visible decision.
  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON public.rag_chunks USING hnsw ((embedding::%s) %s) WITH (m = 16, ef_construction = 64) WHERE collection = %L',
    index_name, vector_type, opclass, collection);
END
$$;--> statement-breakpoint
CREATE FUNCTION clinagent_analyze_rag_chunks() RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
  ANALYZE public.rag_chunks;
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION clinagent_create_collection_index(text, text, text, text), clinagent_analyze_rag_chunks() FROM PUBLIC;--> statement-breakpoint
-- The application role (PostgreSQL servers; see docs/database-roles.md). The role the application connects as
-- must not be able to bypass the triggers: not a superuser (session_replication_role = replica) and not the
-- owner of audit_log (ALTER TABLE ... DISABLE TRIGGER). Migrations run as the owner; this function creates the
-- application role when the migrating role may create roles, and grants it what the application needs: data
-- rights on every table, on audit_log only SELECT and INSERT. Safe to run again (as the owner or a superuser),
-- e.g. after creating the role by hand or moving an installation that ran as the owner onto the role:
--   SELECT clinagent_grant_app_role();            -- or clinagent_grant_app_role('another_role_name')
-- PGlite has one role, a superuser, so there it does nothing; the hash chain is the protection there.
CREATE FUNCTION clinagent_grant_app_role(app_role name DEFAULT 'clinagent_app') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  me record;
  object record;
BEGIN
  IF version() LIKE '%PGlite%' THEN
    RETURN 'skipped: PGlite has a single role';
  END IF;
  IF app_role = current_user THEN
    RETURN format('skipped: connected as %I itself; run migrations as the owner role (DATABASE_MIGRATION_URL)', app_role);
  END IF;
  SELECT rolsuper, rolcreaterole INTO me FROM pg_roles WHERE rolname = current_user;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = app_role) THEN
    IF NOT (me.rolsuper OR me.rolcreaterole) THEN
      RAISE NOTICE 'role % does not exist and % may not create roles: create it as shown in docs/database-roles.md, then run SELECT clinagent_grant_app_role();', app_role, current_user;
      RETURN format('skipped: role %I does not exist', app_role);
    END IF;
    BEGIN
      -- NOLOGIN until an administrator gives it a password (ALTER ROLE ... LOGIN PASSWORD ...).
      EXECUTE format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS', app_role);
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL; -- roles belong to the cluster: another database's migration created it a moment ago
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = app_role AND (rolsuper OR rolbypassrls)) THEN
    RAISE WARNING 'role % is a superuser or bypasses row security: it can switch off the audit trail''s triggers; use an ordinary role', app_role;
  END IF;
  -- CREATE on the database lets pg-boss create its own schema (pgboss) on first start; it gives no right on
  -- the tables here.
  EXECUTE format('GRANT CONNECT, CREATE ON DATABASE %I TO %I', current_database(), app_role);
  EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', app_role);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', app_role);
  EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO %I', app_role);
  EXECUTE format('REVOKE ALL ON TABLE public.audit_log FROM %I', app_role);
  EXECUTE format('GRANT SELECT, INSERT ON TABLE public.audit_log TO %I', app_role);
  -- Tables later migrations create get the same data rights; an append-only one must REVOKE UPDATE, DELETE itself.
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', app_role);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO %I', app_role);
  EXECUTE format('GRANT EXECUTE ON FUNCTION public.clinagent_create_collection_index(text, text, text, text), public.clinagent_analyze_rag_chunks() TO %I', app_role);
  -- pg-boss changes the structure of its own tables at run time (a partition of pgboss.job per queue), which only
  -- their owner may, so an existing pgboss schema is handed to the role. A non-superuser needs membership in the
  -- role to do that; without it this is left to a superuser.
  IF NOT me.rolsuper AND NOT pg_has_role(current_user, app_role, 'MEMBER') THEN
    BEGIN
      EXECUTE format('GRANT %I TO %I', app_role, current_user);
    EXCEPTION WHEN insufficient_privilege THEN
      NULL; -- the hand-overs below then warn
    END;
  END IF;
  BEGIN
    IF to_regnamespace('pgboss') IS NOT NULL THEN
      EXECUTE format('ALTER SCHEMA pgboss OWNER TO %I', app_role);
      FOR object IN
        SELECT c.oid::regclass AS name, CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind
        FROM pg_class c
        WHERE c.relnamespace = 'pgboss'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
          -- a sequence that belongs to a column moves with its table
          AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
      LOOP
        EXECUTE format('ALTER %s %s OWNER TO %I', object.kind, object.name, app_role);
      END LOOP;
      FOR object IN SELECT p.oid::regprocedure AS name FROM pg_proc p WHERE p.pronamespace = 'pgboss'::regnamespace LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO %I', object.name, app_role);
      END LOOP;
      FOR object IN SELECT t.oid::regtype AS name FROM pg_type t WHERE t.typnamespace = 'pgboss'::regnamespace AND t.typtype IN ('e', 'd') LOOP
        EXECUTE format('ALTER TYPE %s OWNER TO %I', object.name, app_role);
      END LOOP;
    END IF;
  EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'could not hand the pgboss schema to role %: %. As a superuser run SELECT clinagent_grant_app_role();', app_role, SQLERRM;
  END;
  RETURN format('granted to %I', app_role);
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION clinagent_grant_app_role(name) FROM PUBLIC;--> statement-breakpoint
SELECT clinagent_grant_app_role();
