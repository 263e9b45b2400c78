CREATE TABLE "feishu_secrets" (
	"app_id" text NOT NULL,
	"name" text NOT NULL,
	"sealed_value" text NOT NULL,
	"key_id" text NOT NULL,
	"expires_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feishu_secrets_app_id_name_pk" PRIMARY KEY("app_id","name")
);
--> statement-breakpoint
CREATE TABLE "feishu_tenants" (
	"tenant_key" text PRIMARY KEY NOT NULL,
	"app_id" text NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"uninstalled_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
