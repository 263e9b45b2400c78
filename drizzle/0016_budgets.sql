CREATE TABLE "budget_notices" (
	"budget" text NOT NULL,
	"limit_name" text NOT NULL,
	"period" text NOT NULL,
	"threshold" double precision NOT NULL,
	"conversation_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_notices_budget_limit_name_period_threshold_pk" PRIMARY KEY("budget","limit_name","period","threshold")
);
