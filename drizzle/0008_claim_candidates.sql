-- The claim's candidates (src/storage/repositories/inbox.ts): the oldest open events whose conversation
-- nobody holds a live lease on. Planned with sorting off, so that it always walks the open-events index
-- in id order and stops after `window_size` events: the open-event count swings faster than autovacuum
-- re-analyzes the table, and on statistics taken while nothing was open the planner preferred reading and
-- sorting the whole backlog, once per claim.
CREATE FUNCTION "butler_claim_candidates"("window_size" integer)
RETURNS TABLE ("id" bigint, "conversation_key" text)
LANGUAGE sql STABLE
SET enable_sort = off
AS $$
  SELECT "event"."id", "event"."conversation_key"
  FROM "inbound_events" AS "event"
  WHERE "event"."status" IN ('pending', 'claimed')
    AND coalesce((
      SELECT "lease"."expires_at" FROM "conversation_leases" AS "lease"
      WHERE "lease"."conversation_key" = "event"."conversation_key"
    ), '-infinity') < now()
  ORDER BY "event"."id"
  LIMIT "window_size"
$$;
