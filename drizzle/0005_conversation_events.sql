CREATE TABLE "conversation_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_key" text NOT NULL,
	"event" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "conversation_events_key_idx" ON "conversation_events" USING btree ("conversation_key","id");