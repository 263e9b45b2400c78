CREATE TABLE "installations" (
	"platform" text NOT NULL,
	"key" text NOT NULL,
	"team_id" text,
	"enterprise_id" text,
	"is_enterprise_install" boolean DEFAULT false NOT NULL,
	"bot_user_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"scopes" text NOT NULL,
	"installer_id" text,
	"sealed_token" text,
	"key_id" text,
	"installed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"uninstalled_at" timestamp with time zone,
	"last_error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "installations_platform_key_pk" PRIMARY KEY("platform","key")
);
