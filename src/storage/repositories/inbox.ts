import {
  and,
  asc,
  eq,
  getTableColumns,
  gte,
  inArray,
  lt,
  not,
  notExists,
  type Placeholder,
  sql,
} from 'drizzle-orm';
import { platforms } from '../../core/contracts/events.js';
import type { InboxEvent, InboxOutcome, InboxRepository, NewInboxEvent } from '../../core/contracts/store.js';
import { cleanJson, cleanText } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { conversationLeases, inboundEvents, isOpenEvent } from '../schema.js';
import { groupCommit } from './group-commit.js';
import { preparedOnFirstUse } from './prepared.js';

/** Whom a message counts toward: its person, or the identity when the caller named nobody else. */
const senderKeyOf = (event: NewInboxEvent) => event.senderKey ?? `${event.platform}:${event.userId}`;

const leaseUntil = (leaseMs: number | Placeholder) => sql`now() + ${leaseMs} * interval '1 millisecond'`;

function toInboxEvent(row: typeof inboundEvents.$inferSelect & { senderRank: number }): InboxEvent {
  return {
    senderRank: row.senderRank,
    id: row.id,
    platform: row.platform,
    dedupKey: row.dedupKey,
    conversationKey: row.conversationKey,
    userId: row.userId,
    senderKey: row.senderKey,
    payload: row.payload,
    attempts: row.attempts,
    createdAt: row.createdAt,
  };
}

/**
 * A claimed message's rank among its sender's messages of the minute up to it (rate limiting), computed
 * as the claim returns it. Outer columns are written qualified by hand: drizzle leaves them bare.
 */
const senderRank = sql<number>`case when inbound_events.kind = 'message' then (
  select count(*) from ${inboundEvents} as recent
  where recent.sender_key = inbound_events.sender_key
    and recent.kind = 'message' and recent.created_at >= inbound_events.created_at - interval '1 minute'
    and recent.id <= inbound_events.id
) else 0 end`.mapWith(Number);

/** Seconds since the oldest event in the selection arrived, by the database's clock; 0 for none. */
const oldestOpenAge =
  sql<number>`coalesce(extract(epoch from now() - min(${inboundEvents.createdAt})), 0)`.mapWith(Number);

/** Namespaces the claim's advisory locks (the second key is the conversation key's hash). */
const claimLockSpace = 7_461_002;
/**
 * Oldest waiting events the claim looks at, in a fair order (butler_fair_candidates, migration 0028); the first
 * whose conversation it can lock wins.
 */
const candidateWindow = 32;

/**
 * The claim, as one statement (one round trip, no explicit transaction):
 *   1. the oldest waiting (pending) events of conversations nobody holds a live lease on, one per
 *      conversation, in rounds: every person's and every channel's first conversation, then their second
 *      (butler_fair_candidates; what a lapsed lease left claimed the sweeper makes pending again);
 *   2. the first of them whose conversation this statement can lock (a transaction-scoped advisory
 *      lock, so concurrent claims pass over each other's conversation instead of waiting, and never
 *      take a later event of a conversation whose first event another claim is taking);
 *   3. a lease on that conversation, unless someone's live lease appeared meanwhile;
 *   4. every open event of the leased conversation, marked claimed, each with its sender's rank, and
 *      whether another claimable event was waiting behind the chosen one.
 * Beside it, the lease of the conversation the caller finished last is released (it stays visible to
 * this statement's snapshot, so that conversation's new events wait for the next claim).
 * No row locks and no anti-joins: the open-event count swings faster than the planner's statistics,
 * and plans built on stale ones (an anti-join against the backlog) once made each claim quadratic.
 * Placeholders: `owner`, `leaseMs`, `release` (a conversation key, or null), `platforms` (those this
 * process serves: events of others wait for a process that can deliver them).
 */
function claimQuery(db: Database) {
  const owner = sql.placeholder('owner');
  const released = db.$with('claim_released').as(
    db
      .delete(conversationLeases)
      .where(
        and(
          eq(conversationLeases.conversationKey, sql.placeholder('release')),
          eq(conversationLeases.owner, owner),
        ),
      )
      .returning({ conversationKey: conversationLeases.conversationKey }),
  );
  // The conversations nobody holds, in rounds (the functions of migration 0028, walking the pending-events
  // index). `following` is the next candidate's conversation: it tells whether other work
  // waits (the worker then wakes a second loop).
  const candidates = db
    .$with('claim_candidates', {
      conversationKey: sql<string>`conversation_key`.as('conversation_key'),
      following: sql<string | null>`following`.as('following'),
    })
    .as(sql`
      select conversation_key, lead(conversation_key) over (order by round, id) as following
      from butler_fair_candidates(${candidateWindow}, ${sql.placeholder('platforms')}::text[])
      order by round, id`);
  // Read in the window's order; the lock function runs row by row until one succeeds.
  const chosen = db.$with('claim_chosen').as(
    db
      .select({
        conversationKey: candidates.conversationKey,
        more: sql<boolean>`${candidates.following} is not null`.as('more'),
      })
      .from(candidates)
      .where(sql`pg_try_advisory_xact_lock(${claimLockSpace}, hashtext(${candidates.conversationKey}))`)
      .limit(1),
  );
  const lease = db.$with('claim_lease').as(
    db
      .insert(conversationLeases)
      .select(
        db
          .select({
            conversationKey: chosen.conversationKey,
            owner: sql<string>`${owner}`.as('owner'),
            expiresAt: sql<Date>`${leaseUntil(sql.placeholder('leaseMs'))}`.as('expires_at'),
          })
          .from(chosen),
      )
      .onConflictDoUpdate({
        target: conversationLeases.conversationKey,
        set: { owner: sql`excluded.owner`, expiresAt: sql`excluded.expires_at` },
        setWhere: lt(conversationLeases.expiresAt, sql`now()`),
      })
      .returning({ conversationKey: conversationLeases.conversationKey }),
  );
  return (
    db
      .with(released, candidates, chosen, lease)
      .update(inboundEvents)
      .set({ status: 'claimed', claimedBy: sql`${owner}`, attempts: sql`${inboundEvents.attempts} + 1` })
      // A scalar subquery, not a join: the plan looks the one conversation up by index.
      .where(
        and(
          eq(inboundEvents.conversationKey, db.select({ key: lease.conversationKey }).from(lease)),
          isOpenEvent(inboundEvents.status),
        ),
      )
      .returning({
        ...getTableColumns(inboundEvents),
        senderRank,
        more: sql<boolean>`(select more from claim_chosen)`,
      })
  );
}

/**
 * Several events in one prepared statement (group commit). Its one parameter is the events as JSON, so
 * the statement's text is the same for any number of them; they are inserted, and numbered, in order.
 */
function insertManyQuery(db: Database) {
  const inserted = db
    .$with('inserted', {
      id: sql<number>`id`.mapWith(Number).as('id'),
      platform: sql<string>`platform`.as('platform'),
      dedupKey: sql<string>`dedup_key`.as('dedup_key'),
    })
    .as(sql`
      insert into ${inboundEvents} (platform, dedup_key, conversation_key, user_id, sender_key, kind, payload)
      select e->>'platform', e->>'dedupKey', e->>'conversationKey', e->>'userId', e->>'senderKey',
        e->'payload'->>'kind', e->'payload'
      from jsonb_array_elements(${sql.placeholder('events')}::jsonb) with ordinality as listed(e, position)
      order by position
      on conflict (platform, dedup_key) do nothing
      returning id, platform, dedup_key`);
  return db
    .with(inserted)
    .select({ id: inserted.id, platform: inserted.platform, dedupKey: inserted.dedupKey })
    .from(inserted);
}

/**
 * The durable inbox. Leases use the database clock (`now()`), so processes with skewed clocks agree
 * on who holds a conversation. Inserts outside a transaction are group-committed (`groupCommit`).
 */
export function inboxRepository(db: Database, options: { groupCommit?: boolean } = {}): InboxRepository {
  // The hottest statement: one per platform delivery, before the acknowledgement.
  const insertStatement = preparedOnFirstUse(() =>
    db
      .insert(inboundEvents)
      .values({
        platform: sql.placeholder('platform'),
        dedupKey: sql.placeholder('dedupKey'),
        conversationKey: sql.placeholder('conversationKey'),
        userId: sql.placeholder('userId'),
        senderKey: sql.placeholder('senderKey'),
        kind: sql.placeholder('kind'),
        payload: sql.placeholder('payload'),
      })
      .onConflictDoNothing({ target: [inboundEvents.platform, inboundEvents.dedupKey] })
      .returning({ id: inboundEvents.id })
      .prepare('butler_inbox_insert'),
  );
  // Built once: the most complex statement, run after every turn and by the idle poller.
  const claimStatement = preparedOnFirstUse(() => claimQuery(db).prepare('butler_inbox_claim'));
  const releaseStatement = preparedOnFirstUse(() =>
    db
      .delete(conversationLeases)
      .where(
        and(
          eq(conversationLeases.conversationKey, sql.placeholder('conversationKey')),
          eq(conversationLeases.owner, sql.placeholder('owner')),
        ),
      )
      .prepare('butler_inbox_release_lease'),
  );

  const insertOne = async (event: NewInboxEvent) => {
    const rows = await insertStatement().execute({
      platform: event.platform,
      dedupKey: event.dedupKey,
      conversationKey: event.conversationKey,
      userId: event.userId,
      senderKey: senderKeyOf(event),
      kind: event.payload.kind,
      payload: cleanJson(event.payload),
    });
    return rows[0]?.id;
  };
  const insertManyStatement = preparedOnFirstUse(() =>
    insertManyQuery(db).prepare('butler_inbox_insert_many'),
  );
  const insertMany = async (events: readonly NewInboxEvent[]) => {
    const listed = events.map((event) => ({
      ...event,
      senderKey: senderKeyOf(event),
      payload: cleanJson(event.payload),
    }));
    const rows = await insertManyStatement().execute({ events: JSON.stringify(listed) });
    const ids = new Map(rows.map((row) => [`${row.platform}\n${row.dedupKey}`, row.id]));
    // A key twice in one batch was inserted once: the first caller gets the id, the other is a duplicate.
    return events.map((event) => {
      const key = `${event.platform}\n${event.dedupKey}`;
      const id = ids.get(key);
      ids.delete(key);
      return id;
    });
  };

  return {
    insert:
      options.groupCommit === false
        ? insertOne
        : groupCommit({ one: insertOne, many: insertMany, inFlight: 2, maxBatch: 200 }),

    async claimNext(owner, leaseMs, release, served = platforms) {
      // A Postgres array literal: drizzle passes a JS array as a list of parameters, not one array.
      const events = await claimStatement().execute({
        owner,
        leaseMs,
        release: release ?? null,
        platforms: `{${served.join(',')}}`,
      });
      const [first] = events;
      if (!first) return undefined;
      events.sort((a, b) => a.id - b.id);
      return {
        conversationKey: first.conversationKey,
        events: events.map(toInboxEvent),
        more: first.more,
      };
    },

    async renewLeases(owner, conversationKeys, leaseMs) {
      if (conversationKeys.length === 0) return [];
      const rows = await db
        .update(conversationLeases)
        .set({ expiresAt: leaseUntil(leaseMs) })
        .where(
          and(
            eq(conversationLeases.owner, owner),
            inArray(conversationLeases.conversationKey, [...conversationKeys]),
            // A lease that lapsed is lost even when nobody took it yet: the turn stops and is claimed again.
            gte(conversationLeases.expiresAt, sql`now()`),
          ),
        )
        .returning({ conversationKey: conversationLeases.conversationKey });
      return rows.map((row) => row.conversationKey);
    },

    async reopenLapsed() {
      const live = db
        .select({ key: conversationLeases.conversationKey })
        .from(conversationLeases)
        .where(
          and(
            eq(conversationLeases.conversationKey, inboundEvents.conversationKey),
            gte(conversationLeases.expiresAt, sql`now()`),
          ),
        );
      const reopened = await db
        .update(inboundEvents)
        .set({ status: 'pending' })
        .where(and(eq(inboundEvents.status, 'claimed'), notExists(live)))
        .returning({ id: inboundEvents.id });
      return reopened.length;
    },

    async releaseLease(conversationKey, owner) {
      await releaseStatement().execute({ conversationKey, owner });
    },

    async finish(eventIds, outcome: InboxOutcome, error) {
      if (eventIds.length === 0) return;
      await db
        .update(inboundEvents)
        .set({
          status: outcome,
          finishedAt: sql`now()`,
          error: error === undefined ? null : cleanText(error),
        })
        .where(inArray(inboundEvents.id, [...eventIds]));
    },

    async pruneFinished(before, limit) {
      const oldest = db
        .select({ id: inboundEvents.id })
        .from(inboundEvents)
        .where(and(not(isOpenEvent(inboundEvents.status)), lt(inboundEvents.finishedAt, before)))
        .orderBy(asc(inboundEvents.id))
        .limit(limit);
      const deleted = await db
        .delete(inboundEvents)
        .where(inArray(inboundEvents.id, oldest))
        .returning({ id: inboundEvents.id });
      return deleted.length;
    },

    async releaseAllLeases() {
      await db.delete(conversationLeases);
    },

    async backlog() {
      // Walks only open events (through the partial index on them), however many finished ones the table keeps.
      const [row] = await db
        .select({
          open: sql<number>`count(*)::int`.mapWith(Number),
          oldestAgeSeconds: oldestOpenAge,
        })
        .from(inboundEvents)
        .where(isOpenEvent(inboundEvents.status));
      return { open: row?.open ?? 0, oldestAgeSeconds: row?.oldestAgeSeconds ?? 0 };
    },

    async exists(platform, dedupKey) {
      const [row] = await db
        .select({ id: inboundEvents.id })
        .from(inboundEvents)
        .where(and(eq(inboundEvents.platform, platform), eq(inboundEvents.dedupKey, dedupKey)))
        .limit(1);
      return row !== undefined;
    },

    async messagesSince(senderKey, since) {
      const [row] = await db
        .select({ count: sql<number>`count(*)`.mapWith(Number) })
        .from(inboundEvents)
        .where(
          and(
            eq(inboundEvents.senderKey, senderKey),
            eq(inboundEvents.kind, 'message'),
            gte(inboundEvents.createdAt, since),
          ),
        );
      return row?.count ?? 0;
    },
  };
}
