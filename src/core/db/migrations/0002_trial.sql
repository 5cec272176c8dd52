CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"action" text NOT NULL,
	"actor" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"old_value" jsonb,
	"new_value" jsonb,
	"reason" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pending_actions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"task_run_id" uuid NOT NULL,
	"record_id" text NOT NULL,
	"event_name" text DEFAULT '' NOT NULL,
	"site" text DEFAULT '' NOT NULL,
	"node_id" text NOT NULL,
	"rule_id" text NOT NULL,
	"field" text NOT NULL,
	"message" text NOT NULL,
	"severity" text NOT NULL,
	"value" jsonb,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "qc_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"skill_id" text NOT NULL,
	"status" text NOT NULL,
	"total" integer NOT NULL,
	"trigger" text DEFAULT 'manual' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "task_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"qc_run_id" uuid,
	"skill_id" text NOT NULL,
	"record_id" text NOT NULL,
	"event_name" text DEFAULT '' NOT NULL,
	"status" text NOT NULL,
	"current_node" text NOT NULL,
	"steps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"on_approve" text,
	"on_reject" text,
	"review" jsonb,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "trial_events" (
	"project_id" text NOT NULL,
	"event_name" text NOT NULL,
	"label" text NOT NULL,
	"day_offset" integer NOT NULL,
	"window_before" integer DEFAULT 0 NOT NULL,
	"window_after" integer DEFAULT 0 NOT NULL,
	"ordinal" integer NOT NULL,
	CONSTRAINT "trial_events_project_id_event_name_pk" PRIMARY KEY("project_id","event_name")
);
--> statement-breakpoint
CREATE TABLE "trial_fields" (
	"project_id" text NOT NULL,
	"field_name" text NOT NULL,
	"form_name" text NOT NULL,
	"field_type" text NOT NULL,
	"label" text NOT NULL,
	"choices" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"validation_min" text,
	"validation_max" text,
	"required" boolean DEFAULT false NOT NULL,
	"ordinal" integer NOT NULL,
	CONSTRAINT "trial_fields_project_id_field_name_pk" PRIMARY KEY("project_id","field_name")
);
--> statement-breakpoint
CREATE TABLE "trial_records" (
	"project_id" text NOT NULL,
	"record_id" text NOT NULL,
	"event_name" text NOT NULL,
	"site" text DEFAULT '' NOT NULL,
	"data" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trial_records_project_id_record_id_event_name_pk" PRIMARY KEY("project_id","record_id","event_name")
);
--> statement-breakpoint
ALTER TABLE "pending_actions" ADD CONSTRAINT "pending_actions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pending_actions" ADD CONSTRAINT "pending_actions_task_run_id_task_runs_id_fk" FOREIGN KEY ("task_run_id") REFERENCES "public"."task_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qc_runs" ADD CONSTRAINT "qc_runs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_runs" ADD CONSTRAINT "task_runs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_runs" ADD CONSTRAINT "task_runs_qc_run_id_qc_runs_id_fk" FOREIGN KEY ("qc_run_id") REFERENCES "public"."qc_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trial_events" ADD CONSTRAINT "trial_events_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trial_fields" ADD CONSTRAINT "trial_fields_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trial_records" ADD CONSTRAINT "trial_records_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_entity_idx" ON "audit_log" USING btree ("project_id","entity_type","entity_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "pending_actions_dedupe_uq" ON "pending_actions" USING btree ("task_run_id","node_id","rule_id","field");--> statement-breakpoint
CREATE INDEX "pending_actions_project_idx" ON "pending_actions" USING btree ("project_id","status");--> statement-breakpoint
CREATE INDEX "qc_runs_project_idx" ON "qc_runs" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "task_runs_batch_record_uq" ON "task_runs" USING btree ("qc_run_id","record_id","event_name");--> statement-breakpoint
CREATE INDEX "task_runs_status_idx" ON "task_runs" USING btree ("project_id","status");--> statement-breakpoint
CREATE INDEX "trial_records_site_idx" ON "trial_records" USING btree ("project_id","site");