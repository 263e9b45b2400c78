import { and, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import type { StopRepository } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { conversationLeases, turnStops } from '../schema.js';

/** Stop requests: one row per conversation, the latest request; recorded only while a lease is live. */
export function stopRepository(db: Database): StopRepository {
  return {
    async request(conversationKey, by) {
      const [live] = await db
        .select({ key: conversationLeases.conversationKey })
        .from(conversationLeases)
        .where(
          and(
            eq(conversationLeases.conversationKey, conversationKey),
            gt(conversationLeases.expiresAt, sql`now()`),
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
