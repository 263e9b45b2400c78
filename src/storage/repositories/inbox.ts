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
  notExists,
  notInArray,
  or,
  sql,
} from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { InboxEvent, InboxOutcome, InboxRepository, NewInboxEvent } from '../../core/store.js';
import type { Database } from '../database.js';
import { conversationLeases, inboundEvents } from '../schema.js';
import { preparedOnFirstUse } from './prepared.js';

const openStatuses = ['pending', 'claimed'];
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
 * The claim, as one statement (one round trip, no explicit transaction): the oldest open event that
 * heads its conversation (so two claimers never split one conversation's queue), locked with SKIP
 * LOCKED; a lease on its conversation unless someone holds a live one; then every open event of the
 * leased conversation, marked claimed. Placeholders: `owner`, `leaseMs`.
 */
function claimQuery(db: Database) {
  const owner = sql.placeholder('owner');
  const expiresAt = sql`now() + ${sql.placeholder('leaseMs')} * interval '1 millisecond'`;
  const earlier = alias(inboundEvents, 'earlier_open_event');
  const candidate = db.$with('claim_candidate').as(
    db
      .select({ conversationKey: inboundEvents.conversationKey })
      .from(inboundEvents)
      .leftJoin(conversationLeases, eq(conversationLeases.conversationKey, inboundEvents.conversationKey))
      .where(
        and(
          claimableCondition,
          notExists(
            db
              .select({ id: earlier.id })
              .from(earlier)
              .where(
                and(
                  eq(earlier.conversationKey, inboundEvents.conversationKey),
                  inArray(earlier.status, openStatuses),
                  lt(earlier.id, inboundEvents.id),
                ),
              ),
          ),
        ),
      )
      .orderBy(asc(inboundEvents.id))
      .limit(1)
      .for('update', { of: inboundEvents, skipLocked: true }),
  );
  const lease = db.$with('claim_lease').as(
    db
      .insert(conversationLeases)
      .select(
        db
          .select({
            conversationKey: candidate.conversationKey,
            owner: sql<string>`${owner}`.as('owner'),
            expiresAt: sql<Date>`${expiresAt}`.as('expires_at'),
          })
          .from(candidate),
      )
      .onConflictDoUpdate({
        target: conversationLeases.conversationKey,
        set: { owner: sql`excluded.owner`, expiresAt: sql`excluded.expires_at` },
        setWhere: lt(conversationLeases.expiresAt, sql`now()`),
      })
      .returning({ conversationKey: conversationLeases.conversationKey }),
  );
  const open = db
    .$with('claim_open')
    .as(
      db
        .select({ id: inboundEvents.id })
        .from(inboundEvents)
        .innerJoin(lease, eq(lease.conversationKey, inboundEvents.conversationKey))
        .where(inArray(inboundEvents.status, openStatuses))
        .for('update', { of: inboundEvents, skipLocked: true }),
    );
  return db
    .with(candidate, lease, open)
    .update(inboundEvents)
    .set({ status: 'claimed', claimedBy: sql`${owner}`, attempts: sql`${inboundEvents.attempts} + 1` })
    .where(inArray(inboundEvents.id, db.select({ id: open.id }).from(open)))
    .returning();
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
        payload: event.payload,
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

    async pruneFinished(before, limit) {
      const oldest = db
        .select({ id: inboundEvents.id })
        .from(inboundEvents)
        .where(and(notInArray(inboundEvents.status, openStatuses), lt(inboundEvents.finishedAt, before)))
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
