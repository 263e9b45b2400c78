-- The claim's candidates (src/storage/repositories/inbox.ts), in a fair order.
--
-- butler_pending_candidates: the oldest events nobody is answering, of conversations nobody holds, walked in id
-- order on the pending-events index (migration 0027; sorting off, as in 0008). The walk of migration 0010 went
-- over open events, claimed ones included, so each claim stepped past every turn in flight. An event left
-- claimed by a process that died (or whose lease lapsed) is made pending again by the sweeper instead.
CREATE FUNCTION "butler_pending_candidates"("window_size" integer, "served" text[])
RETURNS TABLE ("id" bigint, "conversation_key" text, "sender_key" text)
LANGUAGE sql STABLE
SET enable_sort = off
AS $$
  SELECT "event"."id", "event"."conversation_key", "event"."sender_key"
  FROM "inbound_events" AS "event"
  WHERE "event"."status" = 'pending'
    AND "event"."platform" = ANY("served")
    AND coalesce((
      SELECT "lease"."expires_at" FROM "conversation_leases" AS "lease"
      WHERE "lease"."conversation_key" = "event"."conversation_key"
    ), '-infinity') < now()
  ORDER BY "event"."id"
  LIMIT "window_size"
$$;
--> statement-breakpoint
-- butler_fair_candidates: each waiting conversation's first event, with its round: how many conversations of the
-- same person, and of the same channel, run now (a live lease) or wait before it, plus one. The claim takes the
-- first it can lock, by round, then age: everyone's first conversation, then everyone's second, so one person
-- (or one channel) with fifty requests waiting does not hold back the next person's one.
CREATE FUNCTION "butler_fair_candidates"("window_size" integer, "served" text[])
RETURNS TABLE ("id" bigint, "conversation_key" text, "round" bigint)
LANGUAGE sql STABLE
AS $$
  WITH "waiting" AS (
    SELECT DISTINCT ON ("candidate"."conversation_key")
      "candidate"."id", "candidate"."conversation_key", "candidate"."sender_key", true AS "waits"
    FROM butler_pending_candidates("window_size", "served") AS "candidate"
    ORDER BY "candidate"."conversation_key", "candidate"."id"
  ), "running" AS MATERIALIZED (
    -- A live lease whose conversation has no open event left has finished its turn (its process releases it
    -- with its next claim). Senders are looked up one by one, by key.
    SELECT * FROM (
      SELECT "lease"."conversation_key",
        (SELECT "event"."sender_key" FROM "inbound_events" AS "event"
         WHERE "event"."conversation_key" = "lease"."conversation_key" AND "event"."status" IN ('pending', 'claimed')
         ORDER BY "event"."id" LIMIT 1) AS "sender_key",
        false AS "waits"
      FROM "conversation_leases" AS "lease"
      WHERE "lease"."expires_at" >= now()
      OFFSET 0
    ) AS "held"
    WHERE "held"."sender_key" IS NOT NULL
  ), "ranked" AS (
    SELECT "all"."id", "all"."conversation_key", "all"."waits", greatest(
      row_number() OVER (PARTITION BY "all"."sender_key" ORDER BY "all"."waits", "all"."id"),
      row_number() OVER (
        PARTITION BY regexp_replace("all"."conversation_key", ':[^:]*$', '') ORDER BY "all"."waits", "all"."id"
      )
    ) AS "round"
    FROM (
      SELECT "id", "conversation_key", "sender_key", "waits" FROM "waiting"
      UNION ALL
      SELECT NULL::bigint, "conversation_key", "sender_key", "waits" FROM "running"
    ) AS "all"
  )
  SELECT "ranked"."id", "ranked"."conversation_key", "ranked"."round" FROM "ranked" WHERE "ranked"."waits"
$$;
