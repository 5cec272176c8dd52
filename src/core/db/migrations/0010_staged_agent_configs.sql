CREATE TABLE "agent_configs" (
	"agent_id" text NOT NULL,
	"version" integer NOT NULL,
	"config" json NOT NULL,
	"source" text NOT NULL,
	"seed_version" integer NOT NULL,
	"created_by" text NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_configs_agent_id_version_pk" PRIMARY KEY("agent_id","version")
);
