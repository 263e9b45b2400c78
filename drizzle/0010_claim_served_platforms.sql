-- The claim's candidates, for the platforms this process serves (src/storage/repositories/inbox.ts): a
-- process without an adapter for a platform (the service beside a terminal chat on one database) leaves that
-- platform's events to a process that has one, instead of claiming work it cannot deliver. Planned as
-- butler_claim_candidates of migration 0008 (sorting off: walk the open-events index in id order); the
-- one-argument version stays for processes of the previous release during a rolling restart.
CREATE FUNCTION "butler_claim_candidates"("window_size" integer, "served" text[])
RETURNS TABLE ("id" bigint, "conversation_key" text)
LANGUAGE sql STABLE
SET enable_sort = off
AS $$
  SELECT "event"."id", "event"."conversation_key"
  FROM "inbound_events" AS "event"
  WHERE "event"."status" IN ('pending', 'claimed')
    AND "event"."platform" = ANY("served")
    AND coalesce((
      SELECT "lease"."expires_at" FROM "conversation_leases" AS "lease"
      WHERE "lease"."conversation_key" = "event"."conversation_key"
    ), '-infinity') < now()
  ORDER BY "event"."id"
  LIMIT "window_size"
$$;
