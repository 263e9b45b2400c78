CREATE TABLE "file_contents" (
	"sha256" text PRIMARY KEY NOT NULL,
	"bytes" "bytea" NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"conversation_key" text NOT NULL,
	"platform" text NOT NULL,
	"key" text NOT NULL,
	"origin" text NOT NULL,
	"uploaded_by" jsonb,
	"name" text NOT NULL,
	"mime_type" text NOT NULL,
	"size" integer NOT NULL,
	"kind" text NOT NULL,
	"description" text NOT NULL,
	"tokens" integer NOT NULL,
	"note" text,
	"sha256" text NOT NULL,
	"text" text,
	"preview_sha256" text,
	"preview_mime_type" text,
	"delivered_as" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "files" jsonb;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_sha256_file_contents_sha256_fk" FOREIGN KEY ("sha256") REFERENCES "public"."file_contents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_preview_sha256_file_contents_sha256_fk" FOREIGN KEY ("preview_sha256") REFERENCES "public"."file_contents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "files_platform_key_idx" ON "files" USING btree ("platform","key");--> statement-breakpoint
CREATE INDEX "files_conversation_idx" ON "files" USING btree ("conversation_key","created_at");