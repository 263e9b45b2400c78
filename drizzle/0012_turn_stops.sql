CREATE TABLE "turn_stops" (
	"conversation_key" text PRIMARY KEY NOT NULL,
	"requested_by" jsonb NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL
);
