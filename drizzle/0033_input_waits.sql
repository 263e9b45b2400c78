CREATE TABLE "input_waits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_key" text NOT NULL,
	"platform" text NOT NULL,
	"server" text NOT NULL,
	"tool_name" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"requests" json NOT NULL,
	"request_state" text,
	"requested_by" jsonb NOT NULL,
	"requesters" jsonb NOT NULL,
	"resume" jsonb NOT NULL,
	"answers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"answered_by" jsonb,
	"form_message_id" text,
	"status" text DEFAULT 'waiting' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "input_waits_expires_idx" ON "input_waits" USING btree ("status","expires_at");