import { and, asc, count, eq, gte, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { InboxEvent, InboxOutcome, InboxRepository, NewInboxEvent } from '../../core/store.js';
import type { Database } from '../database.js';
import { conversationLeases, inboundEvents } from '../schema.js';
import { preparedOnFirstUse } from './prepared.js';

const openStatuses = ['pending', 'claimed'];
/** How many open events to consider per claim; few, since the lease join already skips conversations others hold. */
const candidateLimit = 4;

/** Open events of conversations nobody holds (or whose holder's lease lapsed). */
const claimableCondition = and(
  inArray(inboundEvents.status, openStatuses),
  or(isNull(conversationLeases.conversationKey), lt(conversationLeases.expiresAt, sql`now()`)),
);

const leaseUntil = (leaseMs: number) => sql`now() + ${leaseMs} * interval '1 millisecond'`;

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
  const peekStatement = preparedOnFirstUse(() =>
    db
      .select({ id: inboundEvents.id })
      .from(inboundEvents)
      .leftJoin(conversationLeases, eq(conversationLeases.conversationKey, inboundEvents.conversationKey))
      .where(claimableCondition)
      .limit(1)
      .prepare('butler_inbox_peek'),
  );
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
        payload: event.payload,
      });
      return rows[0]?.id;
    },

    async claimNext(owner, leaseMs) {
      // Most claims find nothing (the idle poll, the look for more after each turn): answer those with
      // one read instead of a transaction. Work that lands just after it is found by the next claim,
      // as it would be after a transaction's snapshot.
      const [claimable] = await peekStatement().execute();
      if (!claimable) return undefined;
      return db.transaction(async (tx) => {
        const candidates = await tx
          .select({ conversationKey: inboundEvents.conversationKey })
          .from(inboundEvents)
          .leftJoin(conversationLeases, eq(conversationLeases.conversationKey, inboundEvents.conversationKey))
          .where(claimableCondition)
          .orderBy(asc(inboundEvents.id))
          .limit(candidateLimit)
          .for('update', { of: inboundEvents, skipLocked: true });

        for (const conversationKey of new Set(candidates.map((row) => row.conversationKey))) {
          const lease = await tx
            .insert(conversationLeases)
            .values({ conversationKey, owner, expiresAt: leaseUntil(leaseMs) })
            .onConflictDoUpdate({
              target: conversationLeases.conversationKey,
              set: { owner, expiresAt: leaseUntil(leaseMs) },
              setWhere: lt(conversationLeases.expiresAt, sql`now()`),
            })
            .returning({ conversationKey: conversationLeases.conversationKey });
          if (lease.length === 0) continue;
          // Holding the lease makes us the only writer of this conversation's open events.
          const events = await tx
            .update(inboundEvents)
            .set({ status: 'claimed', claimedBy: owner, attempts: sql`${inboundEvents.attempts} + 1` })
            .where(
              and(
                eq(inboundEvents.conversationKey, conversationKey),
                inArray(inboundEvents.status, openStatuses),
              ),
            )
            .returning();
          if (events.length === 0) {
            await tx
              .delete(conversationLeases)
              .where(
                and(
                  eq(conversationLeases.conversationKey, conversationKey),
                  eq(conversationLeases.owner, owner),
                ),
              );
            continue;
          }
          events.sort((a, b) => a.id - b.id);
          return { conversationKey, events: events.map(toInboxEvent) };
        }
        return undefined;
      });
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
        .set({ status: outcome, finishedAt: sql`now()`, error: error ?? null })
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

    async releaseAllLeases() {
      await db.delete(conversationLeases);
    },
  };
}
