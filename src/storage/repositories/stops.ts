import { and, eq, exists, gt, inArray, lte, sql } from 'drizzle-orm';
import type { StopRepository } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { conversationLeases, inboundEvents, isOpenEvent, turnStops } from '../schema.js';

/** Stop requests: one row per conversation, the latest request; recorded only while a turn runs. */
export function stopRepository(db: Database): StopRepository {
  return {
    async request(conversationKey, by) {
      // A turn runs while a process holds the conversation and its events are claimed: a lease alone
      // outlives the turn until the worker's next claim releases it.
      const claimed = db
        .select({ id: inboundEvents.id })
        .from(inboundEvents)
        .where(
          and(
            eq(inboundEvents.conversationKey, conversationKey),
            isOpenEvent(inboundEvents.status),
            eq(inboundEvents.status, 'claimed'),
          ),
        );
      const [live] = await db
        .select({ key: conversationLeases.conversationKey })
        .from(conversationLeases)
        .where(
          and(
            eq(conversationLeases.conversationKey, conversationKey),
            gt(conversationLeases.expiresAt, sql`now()`),
            exists(claimed),
          ),
        );
      if (!live) return false;
      await db
        .insert(turnStops)
        .values({ conversationKey, requestedBy: by })
        .onConflictDoUpdate({
          target: turnStops.conversationKey,
          set: { requestedBy: by, requestedAt: sql`now()` },
        });
      return true;
    },

    async pending(conversationKeys) {
      if (conversationKeys.length === 0) return [];
      return db
        .select()
        .from(turnStops)
        .where(inArray(turnStops.conversationKey, [...conversationKeys]));
    },

    async clear(conversationKey, upTo) {
      await db
        .delete(turnStops)
        .where(and(eq(turnStops.conversationKey, conversationKey), lte(turnStops.requestedAt, upTo)));
    },
  };
}
