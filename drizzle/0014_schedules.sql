CREATE TABLE "schedule_runs" (
	"schedule_id" uuid NOT NULL,
	"slot" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"event_id" bigint,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "schedule_runs_schedule_id_slot_pk" PRIMARY KEY("schedule_id","slot")
);
--> statement-breakpoint
CREATE TABLE "schedules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_key" text NOT NULL,
	"name" text,
	"source" text NOT NULL,
	"creator" jsonb NOT NULL,
	"prompt" text NOT NULL,
	"cron" text,
	"run_at" timestamp with time zone,
	"timezone" text NOT NULL,
	"anchor" text,
	"is_direct" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"next_run_at" timestamp with time zone,
	"last_run_at" timestamp with time zone,
	"last_outcome" text,
	"failures" integer DEFAULT 0 NOT NULL,
	"status_note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "schedule_id" uuid;--> statement-breakpoint
ALTER TABLE "schedule_runs" ADD CONSTRAINT "schedule_runs_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "schedules_due_idx" ON "schedules" USING btree ("next_run_at") WHERE "schedules"."status" = 'active';--> statement-breakpoint
CREATE INDEX "schedules_conversation_idx" ON "schedules" USING btree ("conversation_key","status");--> statement-breakpoint
CREATE UNIQUE INDEX "schedules_name_idx" ON "schedules" USING btree ("name") WHERE "schedules"."name" is not null;