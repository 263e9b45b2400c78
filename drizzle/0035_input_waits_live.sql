ALTER TABLE "input_waits" ALTER COLUMN "resume" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "input_waits" ADD COLUMN "live_until" timestamp with time zone;