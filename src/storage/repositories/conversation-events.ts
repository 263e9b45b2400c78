import { and, asc, desc, eq, gt } from 'drizzle-orm';
import type { ConversationEventRepository } from '../../core/conversation-events.js';
import { cleanJson } from '../../core/text.js';
import type { Database } from '../database.js';
import { conversationEvents } from '../schema.js';

export function conversationEventRepository(db: Database): ConversationEventRepository {
  return {
    async append(conversationKey, events) {
      if (events.length === 0) return [];
      const rows = await db
        .insert(conversationEvents)
        .values(events.map((event) => ({ conversationKey, event: cleanJson(event) })))
        .returning({ id: conversationEvents.id });
      return rows.map((row) => row.id).sort((left, right) => left - right);
    },

    async listAfter(conversationKey, afterId, limit) {
      const rows = await db
        .select({ id: conversationEvents.id, event: conversationEvents.event })
        .from(conversationEvents)
        .where(
          and(eq(conversationEvents.conversationKey, conversationKey), gt(conversationEvents.id, afterId)),
        )
        .orderBy(asc(conversationEvents.id))
        .limit(limit);
      return rows;
    },

    async lastId(conversationKey) {
      const [row] = await db
        .select({ id: conversationEvents.id })
        .from(conversationEvents)
        .where(eq(conversationEvents.conversationKey, conversationKey))
        .orderBy(desc(conversationEvents.id))
        .limit(1);
      return row?.id ?? 0;
    },
  };
}
