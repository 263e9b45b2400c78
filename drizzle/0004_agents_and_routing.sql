CREATE TABLE "agent_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_key" text NOT NULL,
	"turn_id" uuid NOT NULL,
	"agent" text NOT NULL,
	"delegate_call_id" text NOT NULL,
	"status" text NOT NULL,
	"steps" integer NOT NULL,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"error" text,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "routing_decisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_key" text NOT NULL,
	"turn_id" uuid NOT NULL,
	"intent" text,
	"agent" text,
	"confidence" real,
	"reasoning" text,
	"action" text NOT NULL,
	"error" text,
	"model" text NOT NULL,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "agent" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "delegate_call_id" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "agent" text;--> statement-breakpoint
CREATE INDEX "agent_runs_agent_idx" ON "agent_runs" USING btree ("agent","created_at");--> statement-breakpoint
CREATE INDEX "agent_runs_conversation_idx" ON "agent_runs" USING btree ("conversation_key","created_at");--> statement-breakpoint
CREATE INDEX "routing_decisions_conversation_idx" ON "routing_decisions" USING btree ("conversation_key","created_at");