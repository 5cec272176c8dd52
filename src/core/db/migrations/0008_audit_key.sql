CREATE TABLE "audit_chain_key" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"fingerprint" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_chain_key_single_row" CHECK ("audit_chain_key"."id")
);
--> statement-breakpoint
-- The hash chain of 0005 is plain sha256: anyone who can edit the database can also recompute every hash after an
-- edit (audit_log_entry_hash is right there), and `clinagent audit verify` then passes. From here each entry's
-- hash is an HMAC-SHA256 keyed with the audit key, which ClinAgent keeps outside the database (AUDIT_KEY or a key
-- file, docs/audit-trail.md) and sets on each session it opens (src/core/db/connect.ts) as the key XOR ipad and
-- XOR opad, so the database needs only its built-in sha256(). Whoever connects without the key cannot write an
-- entry, and a hash recomputed without it no longer verifies.
-- HMAC(K, m) = sha256((K xor opad) || sha256((K xor ipad) || m)), m = the canonical form of 0005 (the same jsonb
-- array as UTF-8 text); so an independent verifier computes HMAC-SHA256(AUDIT_KEY, m) with any library.
CREATE FUNCTION audit_log_entry_mac(bytea, bytea, text, bigint, text, text, text, text, text, timestamptz, jsonb, jsonb, text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
  SELECT encode(sha256($2 || sha256($1 || convert_to(jsonb_build_array($3, $4, $5, $6, $7, $8, $9,
    to_char($10 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), $11, $12, $13)::text, 'UTF8'))), 'hex')
$$;--> statement-breakpoint
-- The trigger of 0005 with a keyed hash. Two more refusals, each before anything is written:
-- - a session without the key (anyone but ClinAgent: psql, a script, an attacker replaying entries);
-- - a session whose key is not the one the trail is chained with (audit_chain_key, claimed by the first keyed
--   session): a second host with a new key file would otherwise write entries that never verify.
CREATE OR REPLACE FUNCTION audit_log_chain() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
  previous text;
  session_key text := nullif(current_setting('clinagent.audit_key_id', true), '');
  chain_key text;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'audit_log entries must be written at READ COMMITTED isolation, not %: the hash chain needs to see the entry committed just before', current_setting('transaction_isolation')
      USING ERRCODE = 'feature_not_supported';
  END IF;
  IF session_key IS NULL THEN
    RAISE EXCEPTION 'audit_log entries are written by ClinAgent only: this session has no audit key'
      USING ERRCODE = 'insufficient_privilege',
        HINT = 'ClinAgent sets its audit key (AUDIT_KEY or AUDIT_KEY_FILE) on every connection it opens; write audit entries through ClinAgent (docs/audit-trail.md).';
  END IF;
  SELECT k.fingerprint INTO chain_key FROM public.audit_chain_key k;
  IF chain_key IS NULL THEN
    INSERT INTO public.audit_chain_key (id, fingerprint) VALUES (true, session_key) ON CONFLICT (id) DO NOTHING;
    SELECT k.fingerprint INTO chain_key FROM public.audit_chain_key k;
  END IF;
  IF chain_key <> session_key THEN
    RAISE EXCEPTION 'this session''s audit key (fingerprint %) is not the key this audit trail is chained with (fingerprint %)', session_key, chain_key
      USING ERRCODE = 'insufficient_privilege',
        HINT = 'Every ClinAgent process on one database needs the same AUDIT_KEY or key file (docs/audit-trail.md).';
  END IF;
  PERFORM pg_advisory_xact_lock(720417005, hashtext(NEW.project_id));
  NEW.id := nextval('public.audit_log_id_seq'::regclass);
  NEW.at := now();
  SELECT a.hash INTO previous FROM public.audit_log a WHERE a.project_id = NEW.project_id ORDER BY a.id DESC LIMIT 1;
  NEW.prev_hash := coalesce(previous, repeat('0', 64));
  NEW.hash := public.audit_log_entry_mac(decode(current_setting('clinagent.audit_key_ipad'), 'hex'), decode(current_setting('clinagent.audit_key_opad'), 'hex'),
    NEW.prev_hash, NEW.id, NEW.project_id, NEW.entity_type, NEW.entity_id, NEW.action, NEW.actor, NEW.at, NEW.old_value, NEW.new_value, NEW.reason);
  RETURN NEW;
END
$$;--> statement-breakpoint
-- Entries written before this migration are signed with the key now, project by project in id order, but only
-- as far as their sha256 chain still holds: from the first entry that no longer matches it (edited, deleted or
-- forged before the upgrade) the entries keep their old hashes, so verification goes on naming that entry rather
-- than the key blessing it. The migrating session carries the key when ClinAgent runs the migration (clinagent
-- migrate, or any start); run any other way, a database that already has entries is refused.
ALTER TABLE "audit_log" DISABLE TRIGGER audit_log_append_only;--> statement-breakpoint
DO $$
DECLARE
  session_key text := nullif(current_setting('clinagent.audit_key_id', true), '');
  inner_pad bytea;
  outer_pad bytea;
  existing bigint;
  entry record;
  chain text;
  sha256_previous text;
  previous text;
  intact boolean;
BEGIN
  SELECT count(*) INTO existing FROM audit_log;
  IF session_key IS NULL THEN
    IF existing > 0 THEN
      RAISE EXCEPTION 'migration 0008 signs the % existing audit entries with the audit key, but this connection has none', existing
        USING HINT = 'Apply migrations with ClinAgent itself (clinagent migrate, or start the server): it sets the key from AUDIT_KEY or AUDIT_KEY_FILE on every connection.';
    END IF;
    RETURN;
  END IF;
  INSERT INTO audit_chain_key (id, fingerprint) VALUES (true, session_key);
  inner_pad := decode(current_setting('clinagent.audit_key_ipad'), 'hex');
  outer_pad := decode(current_setting('clinagent.audit_key_opad'), 'hex');
  FOR entry IN SELECT * FROM audit_log ORDER BY project_id, id LOOP
    IF chain IS DISTINCT FROM entry.project_id THEN
      chain := entry.project_id;
      sha256_previous := repeat('0', 64);
      previous := repeat('0', 64);
      intact := true;
    END IF;
    CONTINUE WHEN NOT intact;
    IF entry.prev_hash IS DISTINCT FROM sha256_previous
       OR entry.hash IS DISTINCT FROM audit_log_entry_hash(entry.prev_hash, entry.id, entry.project_id, entry.entity_type, entry.entity_id, entry.action, entry.actor, entry.at, entry.old_value, entry.new_value, entry.reason) THEN
      intact := false;
      RAISE WARNING 'the audit chain of project % was already broken at entry % before it was keyed; it is left as it was, so verification names that entry', entry.project_id, entry.id;
      CONTINUE;
    END IF;
    sha256_previous := entry.hash;
    UPDATE audit_log SET prev_hash = previous,
      hash = audit_log_entry_mac(inner_pad, outer_pad, previous, entry.id, entry.project_id, entry.entity_type, entry.entity_id, entry.action, entry.actor, entry.at, entry.old_value, entry.new_value, entry.reason)
    WHERE id = entry.id
    RETURNING hash INTO previous;
  END LOOP;
END
$$;--> statement-breakpoint
ALTER TABLE "audit_log" ENABLE TRIGGER audit_log_append_only;
