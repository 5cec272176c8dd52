CREATE TABLE "consult_client_messages" (
	"run_id" uuid NOT NULL,
	"client_message_id" uuid NOT NULL,
	"fingerprint" text NOT NULL,
	"reply" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone,
	CONSTRAINT "consult_client_messages_pk" PRIMARY KEY("run_id","client_message_id")
);
--> statement-breakpoint
ALTER TABLE "consult_client_messages" ADD CONSTRAINT "consult_client_messages_run_id_agent_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."agent_runs"("id") ON DELETE cascade ON UPDATE no action;