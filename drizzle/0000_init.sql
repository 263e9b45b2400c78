CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_key" text NOT NULL,
	"platform" text NOT NULL,
	"tool_name" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"risk" text NOT NULL,
	"summary" text NOT NULL,
	"requested_by" jsonb NOT NULL,
	"approver_ids" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by" jsonb,
	"decided_at" timestamp with time zone,
	"reason" text,
	"expires_at" timestamp with time zone NOT NULL,
	"card_message_id" text,
	"resume" jsonb NOT NULL,
	"execution" text,
	"result" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_key" text NOT NULL,
	"approval_id" uuid,
	"tool_name" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"arguments" jsonb,
	"risk" text NOT NULL,
	"decision" text NOT NULL,
	"outcome" text NOT NULL,
	"actor" text NOT NULL,
	"decided_by" text,
	"error" text,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "compactions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"tokens_before" integer NOT NULL,
	"tokens_after" integer NOT NULL,
	"messages_folded" integer NOT NULL,
	"model" text NOT NULL,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_leases" (
	"conversation_key" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"key" text NOT NULL,
	"platform" text NOT NULL,
	"workspace" text NOT NULL,
	"channel" text NOT NULL,
	"thread" text NOT NULL,
	"summary" text,
	"summary_tokens" integer DEFAULT 0 NOT NULL,
	"last_compacted_at" timestamp with time zone,
	"compaction_retry_at" timestamp with time zone,
	"token_scale" real DEFAULT 1 NOT NULL,
	"prompt_tokens_total" bigint DEFAULT 0 NOT NULL,
	"completion_tokens_total" bigint DEFAULT 0 NOT NULL,
	"inflight" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversations_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "inbound_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"platform" text NOT NULL,
	"dedup_key" text NOT NULL,
	"conversation_key" text NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"claimed_by" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"platform" text NOT NULL,
	"workspace" text NOT NULL,
	"user_id" text NOT NULL,
	"content" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"author" text,
	"tool_calls" jsonb,
	"tool_call_id" text,
	"tokens" integer NOT NULL,
	"compacted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "compactions" ADD CONSTRAINT "compactions_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approvals_pending_idx" ON "approvals" USING btree ("expires_at") WHERE "approvals"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "approvals_conversation_idx" ON "approvals" USING btree ("conversation_key");--> statement-breakpoint
CREATE INDEX "audit_log_conversation_idx" ON "audit_log" USING btree ("conversation_key","created_at");--> statement-breakpoint
CREATE INDEX "compactions_conversation_idx" ON "compactions" USING btree ("conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_events_dedup_idx" ON "inbound_events" USING btree ("platform","dedup_key");--> statement-breakpoint
CREATE INDEX "inbound_events_open_idx" ON "inbound_events" USING btree ("conversation_key","id") WHERE "inbound_events"."status" in ('pending', 'claimed');--> statement-breakpoint
CREATE INDEX "inbound_events_user_idx" ON "inbound_events" USING btree ("platform","user_id","created_at");--> statement-breakpoint
CREATE INDEX "memories_owner_idx" ON "memories" USING btree ("platform","workspace","user_id","last_used_at");--> statement-breakpoint
CREATE INDEX "messages_window_idx" ON "messages" USING btree ("conversation_id","compacted","id");