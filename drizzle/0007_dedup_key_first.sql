DROP INDEX "inbound_events_dedup_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_events_dedup_idx" ON "inbound_events" USING btree ("dedup_key","platform");