CREATE TABLE "bus_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payload" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "bus_events_created_idx" ON "bus_events" USING btree ("created_at");