ALTER TABLE "approvals" ADD COLUMN "requesters" jsonb;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "confirm_by" jsonb;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "requesters" jsonb;