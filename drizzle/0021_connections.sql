CREATE TABLE "connection_waits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server" text NOT NULL,
	"owner_key" text NOT NULL,
	"owner" jsonb NOT NULL,
	"conversation_key" text NOT NULL,
	"platform" text NOT NULL,
	"requested_by" jsonb NOT NULL,
	"requesters" jsonb NOT NULL,
	"call_ids" jsonb NOT NULL,
	"resume" jsonb NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_connections" (
	"server" text NOT NULL,
	"owner_key" text NOT NULL,
	"owner" jsonb NOT NULL,
	"sealed" text NOT NULL,
	"key_id" text NOT NULL,
	"expires_at" timestamp with time zone,
	"scope" text,
	"version" integer DEFAULT 1 NOT NULL,
	"refreshing_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_connections_server_owner_key_pk" PRIMARY KEY("server","owner_key")
);
--> statement-breakpoint
CREATE TABLE "oauth_flows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server" text NOT NULL,
	"owner_key" text NOT NULL,
	"owner" jsonb NOT NULL,
	"link_hash" text NOT NULL,
	"state_hash" text,
	"sealed_verifier" text,
	"verifier_key_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"opened_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_flows_link_hash_unique" UNIQUE("link_hash"),
	CONSTRAINT "oauth_flows_state_hash_unique" UNIQUE("state_hash")
);
--> statement-breakpoint
CREATE TABLE "oauth_servers" (
	"server" text PRIMARY KEY NOT NULL,
	"sealed_client" text,
	"client_key_id" text,
	"discovery" jsonb,
	"tools" jsonb,
	"tools_listed_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "connection_waits_owner_idx" ON "connection_waits" USING btree ("server","owner_key","status");--> statement-breakpoint
CREATE INDEX "connection_waits_expires_idx" ON "connection_waits" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "oauth_flows_expires_idx" ON "oauth_flows" USING btree ("expires_at");