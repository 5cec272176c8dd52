CREATE TABLE "skill_versions" (
	"skill_id" text NOT NULL,
	"version" integer NOT NULL,
	"definition" json NOT NULL,
	"source_yaml" text NOT NULL,
	"status" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"comment" text DEFAULT '' NOT NULL,
	"activated_by" text,
	"activated_at" timestamp with time zone,
	"seed_hash" text,
	"seed_file" text,
	CONSTRAINT "skill_versions_skill_id_version_pk" PRIMARY KEY("skill_id","version")
);
--> statement-breakpoint
ALTER TABLE "task_runs" ADD COLUMN "skill_version" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "skill_versions_active_uq" ON "skill_versions" USING btree ("skill_id") WHERE "skill_versions"."status" = 'active';--> statement-breakpoint
CREATE UNIQUE INDEX "skill_versions_seed_uq" ON "skill_versions" USING btree ("skill_id","seed_hash") WHERE "skill_versions"."seed_hash" is not null;