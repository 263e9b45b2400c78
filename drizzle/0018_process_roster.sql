CREATE TABLE "butler_processes" (
	"id" text PRIMARY KEY NOT NULL,
	"budgets" jsonb NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
