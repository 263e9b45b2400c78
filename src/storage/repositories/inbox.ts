import {
  and,
  asc,
  count,
  eq,
  gte,
  inArray,
  isNull,
  lt,
  lte,
  not,
  or,
  type Placeholder,
  sql,
} from 'drizzle-orm';
import type { InboxEvent, InboxOutcome, InboxRepository, NewInboxEvent } from '../../core/store.js';
import { cleanJson, cleanText } from '../../core/text.js';
import type { Database } from '../database.js';
import { conversationLeases, inboundEvents, isOpenEvent } from '../schema.js';
import { preparedOnFirstUse } from './prepared.js';

/** Open events of conversations nobody holds (or whose holder's lease lapsed). */
const claimableCondition = and(
  isOpenEvent(inboundEvents.status),
  or(isNull(conversationLeases.conversationKey), lt(conversationLeases.expiresAt, sql`now()`)),
);

const leaseUntil = (leaseMs: number | Placeholder) => sql`now() + ${leaseMs} * interval '1 millisecond'`;

function toInboxEvent(row: typeof inboundEvents.$inferSelect): InboxEvent {
  return {
    id: row.id,
    platform: row.platform,
    dedupKey: row.dedupKey,
    conversationKey: row.conversationKey,
    userId: row.userId,
    payload: row.payload,
    attempts: row.attempts,
    createdAt: row.createdAt,
  };
}

/** Namespaces the claim's advisory locks (the second key is the conversation key's hash). */
const claimLockSpace = 7_461_002;
/** Oldest claimable events the claim looks at; the first whose conversation it can lock wins. */
const candidateWindow = 32;

/**
 * The claim, as one statement (one round trip, no explicit transaction):
 *   1. the oldest open events of conversations nobody holds a live lease on;
 *   2. the first of them whose conversation this statement can lock (a transaction-scoped advisory
 *      lock, so concurrent claims pass over each other's conversation instead of waiting, and never
 *      take a later event of a conversation whose first event another claim is taking);
 *   3. a lease on that conversation, unless someone's live lease appeared meanwhile;
 *   4. every open event of the leased conversation, marked claimed.
 * No row locks and no anti-joins: the open-event count swings faster than the planner's statistics,
 * and plans built on stale ones (an anti-join against the backlog) once made each claim quadratic.
 * Placeholders: `owner`, `leaseMs`.
 */
function claimQuery(db: Database) {
  const owner = sql.placeholder('owner');
  const candidates = db
    .$with('claim_candidates')
    .as(
      db
        .select({ conversationKey: inboundEvents.conversationKey })
        .from(inboundEvents)
        .leftJoin(conversationLeases, eq(conversationLeases.conversationKey, inboundEvents.conversationKey))
        .where(claimableCondition)
        .orderBy(asc(inboundEvents.id))
        .limit(candidateWindow),
    );
  // Read in the window's order; the lock function runs row by row until one succeeds.
  const chosen = db
    .$with('claim_chosen')
    .as(
      db
        .select({ conversationKey: candidates.conversationKey })
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
      .with(candidates, chosen, lease)
      .update(inboundEvents)
      .set({ status: 'claimed', claimedBy: sql`${owner}`, attempts: sql`${inboundEvents.attempts} + 1` })
      // A scalar subquery, not a join: the plan looks the one conversation up by index.
      .where(
        and(
          eq(inboundEvents.conversationKey, db.select({ key: lease.conversationKey }).from(lease)),
          isOpenEvent(inboundEvents.status),
        ),
      )
      .returning()
  );
}

/**
 * The durable inbox. Leases use the database clock (`now()`), so processes with skewed clocks agree
 * on who holds a conversation.
 */
export function inboxRepository(db: Database): InboxRepository {
  // The hottest statement: one per platform delivery, before the acknowledgement.
  const insertStatement = preparedOnFirstUse(() =>
    db
      .insert(inboundEvents)
      .values({
        platform: sql.placeholder('platform'),
        dedupKey: sql.placeholder('dedupKey'),
        conversationKey: sql.placeholder('conversationKey'),
        userId: sql.placeholder('userId'),
        kind: sql.placeholder('kind'),
        payload: sql.placeholder('payload'),
      })
      .onConflictDoNothing({ target: [inboundEvents.platform, inboundEvents.dedupKey] })
      .returning({ id: inboundEvents.id })
      .prepare('butler_inbox_insert'),
  );
  const countStatement = preparedOnFirstUse(() =>
    db
      .select({ value: count() })
      .from(inboundEvents)
      .where(
        and(
          eq(inboundEvents.platform, sql.placeholder('platform')),
          eq(inboundEvents.userId, sql.placeholder('userId')),
          eq(inboundEvents.kind, 'message'),
          gte(inboundEvents.createdAt, sql.placeholder('since')),
          lte(inboundEvents.id, sql.placeholder('upToId')),
        ),
      )
      .prepare('butler_inbox_count_user_messages'),
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

  return {
    async insert(event: NewInboxEvent) {
      const rows = await insertStatement().execute({
        platform: event.platform,
        dedupKey: event.dedupKey,
        conversationKey: event.conversationKey,
        userId: event.userId,
        kind: event.payload.kind,
        payload: cleanJson(event.payload),
      });
      return rows[0]?.id;
    },

    async claimNext(owner, leaseMs) {
      const events = await claimStatement().execute({ owner, leaseMs });
      const [first] = events;
      if (!first) return undefined;
      events.sort((a, b) => a.id - b.id);
      return { conversationKey: first.conversationKey, events: events.map(toInboxEvent) };
    },

    async renewLease(conversationKey, owner, leaseMs) {
      const rows = await db
        .update(conversationLeases)
        .set({ expiresAt: leaseUntil(leaseMs) })
        .where(
          and(eq(conversationLeases.conversationKey, conversationKey), eq(conversationLeases.owner, owner)),
        )
        .returning({ conversationKey: conversationLeases.conversationKey });
      return rows.length > 0;
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

    async countUserMessages(platform, userId, window) {
      // Placeholders in conditions skip the column's encoder: pass the timestamp as the driver wants it.
      const [row] = await countStatement().execute({
        platform,
        userId,
        since: window.since.toISOString(),
        upToId: window.upToId,
      });
      return row?.value ?? 0;
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
  };
}
