CREATE TABLE "model_slots" (
	"model" text NOT NULL,
	"slot" integer NOT NULL,
	"holder" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "model_slots_model_slot_pk" PRIMARY KEY("model","slot")
);
