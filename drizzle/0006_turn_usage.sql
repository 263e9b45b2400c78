CREATE TABLE "turn_usage" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"turn_id" text NOT NULL,
	"conversation_key" text NOT NULL,
	"platform" text NOT NULL,
	"workspace" text NOT NULL,
	"channel" text NOT NULL,
	"user_id" text NOT NULL,
	"day" date DEFAULT (now() at time zone 'utc')::date NOT NULL,
	"model" text,
	"compaction_model" text,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"compaction_tokens" integer NOT NULL,
	"cost_usd" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "turn_usage_day_idx" ON "turn_usage" USING btree ("day");--> statement-breakpoint
CREATE INDEX "turn_usage_conversation_idx" ON "turn_usage" USING btree ("conversation_key","day");--> statement-breakpoint
CREATE INDEX "turn_usage_channel_idx" ON "turn_usage" USING btree ("workspace","channel","day");--> statement-breakpoint
CREATE INDEX "turn_usage_user_idx" ON "turn_usage" USING btree ("platform","user_id","day");