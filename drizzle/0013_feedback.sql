CREATE TABLE "feedback" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_key" text NOT NULL,
	"turn_id" text NOT NULL,
	"message_id" text,
	"platform" text NOT NULL,
	"user_id" text NOT NULL,
	"user_name" text,
	"rating" text NOT NULL,
	"comment" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "turn_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "feedback_rater_idx" ON "feedback" USING btree ("turn_id","platform","user_id");--> statement-breakpoint
CREATE INDEX "feedback_recent_idx" ON "feedback" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "messages_platform_ids_idx" ON "messages" USING gin ("platform_message_ids");--> statement-breakpoint
CREATE INDEX "messages_turn_idx" ON "messages" USING btree ("turn_id");