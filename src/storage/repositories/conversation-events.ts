import { and, asc, desc, eq, gt, sql } from 'drizzle-orm';
import type { ConversationEventRepository } from '../../core/contracts/conversation-events.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { conversationEvents } from '../schema.js';

/** Advisory lock space of a conversation's appends (two-key form: this, then the key's hash). */
const appendLockSpace = 7_461_004;

export function conversationEventRepository(db: Database): ConversationEventRepository {
  return {
    // Followers read `id > last`. Ids come from a sequence but become visible at commit, so appends to one
    // conversation take turns (a lock held to commit): an id is never seen before a lower one of its
    // conversation, which a follower would then skip.
    async append(conversationKey, events) {
      if (events.length === 0) return [];
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${appendLockSpace}, hashtext(${conversationKey}))`);
        const rows = await tx
          .insert(conversationEvents)
          .values(events.map((event) => ({ conversationKey, event: cleanJson(event) })))
          .returning({ id: conversationEvents.id });
        return rows.map((row) => row.id).sort((left, right) => left - right);
      });
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
