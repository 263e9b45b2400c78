DROP INDEX "inbound_events_user_idx";--> statement-breakpoint
DROP INDEX "memories_owner_idx";--> statement-breakpoint
ALTER TABLE "inbound_events" ADD COLUMN "sender_key" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "owner_key" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "turn_usage" ADD COLUMN "user_platform" text;--> statement-breakpoint
CREATE INDEX "inbound_events_sender_idx" ON "inbound_events" USING btree ("sender_key","created_at");--> statement-breakpoint
CREATE INDEX "memories_owner_key_idx" ON "memories" USING btree ("owner_key","last_used_at");