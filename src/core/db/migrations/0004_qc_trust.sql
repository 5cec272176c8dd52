CREATE TABLE "project_redcap" (
	"project_id" text PRIMARY KEY NOT NULL,
	"api_url" text NOT NULL,
	"token_env" text NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trial_arms" (
	"project_id" text NOT NULL,
	"arm_num" integer NOT NULL,
	"name" text NOT NULL,
	CONSTRAINT "trial_arms_project_id_arm_num_pk" PRIMARY KEY("project_id","arm_num")
);
--> statement-breakpoint
DROP INDEX "pending_actions_dedupe_uq";--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "project_members" ADD COLUMN "can_view_identifiers" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "deactivated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "project_id" text;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD COLUMN "last_task_run_id" uuid;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD COLUMN "held_by_task_run_id" uuid;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD COLUMN "no_longer_fires" jsonb;--> statement-breakpoint
ALTER TABLE "task_runs" ADD COLUMN "review_request" jsonb;--> statement-breakpoint
ALTER TABLE "task_runs" ADD COLUMN "recovered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trial_events" ADD COLUMN "arm_num" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "trial_fields" ADD COLUMN "identifier" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "project_redcap" ADD CONSTRAINT "project_redcap_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trial_arms" ADD CONSTRAINT "trial_arms_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "traces_project_idx" ON "traces" USING btree ("project_id","started_at");--> statement-breakpoint
UPDATE "pending_actions" SET "last_task_run_id" = "task_run_id";--> statement-breakpoint
-- Before this migration every run opened its own query for the same finding. Keep the oldest live query of
-- each finding and cancel the copies, each with an audit entry saying which query it duplicated, so the
-- unique index below can be built and no stored query disappears.
WITH ranked AS (
  SELECT "id", "project_id", first_value("id") OVER w AS keep, row_number() OVER w AS n
  FROM "pending_actions"
  WHERE "status" IN ('open', 'answered', 'reopened')
  WINDOW w AS (PARTITION BY "project_id", "record_id", "event_name", "rule_id", "field" ORDER BY "created_at", "id")
), cancelled AS (
  UPDATE "pending_actions" p SET "status" = 'cancelled', "updated_at" = now()
  FROM ranked r WHERE p."id" = r."id" AND r.n > 1
  RETURNING p."id", p."project_id", r.keep
)
INSERT INTO "audit_log" ("project_id", "entity_type", "entity_id", "action", "actor", "old_value", "new_value", "reason")
SELECT "project_id", 'query', "id"::text, 'status:cancelled', 'migration:0004', '{"status":"open"}'::jsonb,
       jsonb_build_object('status', 'cancelled', 'duplicateOf', keep::text), 'duplicate of query ' || keep::text || ' for the same finding'
FROM cancelled;--> statement-breakpoint
-- User tokens now expire; existing ones get the default 30 days from today rather than stopping at once.
UPDATE "api_tokens" SET "expires_at" = now() + interval '30 days' WHERE "label" <> 'CLINAGENT_ADMIN_TOKEN' AND "revoked_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "pending_actions_finding_uq" ON "pending_actions" USING btree ("project_id","record_id","event_name","rule_id","field") WHERE status IN ('open', 'answered', 'reopened');--> statement-breakpoint
CREATE INDEX "pending_actions_record_idx" ON "pending_actions" USING btree ("project_id","record_id");