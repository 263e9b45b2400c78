CREATE TABLE "approval_grants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"risk" text NOT NULL,
	"granted_by" jsonb NOT NULL,
	"approval_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_by" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "batch_id" uuid;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "origin" jsonb;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "standing_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "grant_id" uuid;--> statement-breakpoint
CREATE INDEX "approval_grants_lookup_idx" ON "approval_grants" USING btree ("conversation_key","tool_name");--> statement-breakpoint
CREATE INDEX "approvals_batch_idx" ON "approvals" USING btree ("batch_id");