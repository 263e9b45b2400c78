import { and, desc, eq, isNotNull, type SQL, sql } from 'drizzle-orm';
import type {
  FeedbackRecord,
  FeedbackRepository,
  NewFeedback,
  RatedReply,
} from '../../core/contracts/feedback-records.js';
import { encodeCursor } from '../../core/contracts/read-models.js';
import type { Database } from '../database.js';
import { conversations, feedback, messages } from '../schema.js';
import { before, paged } from './reads.js';

/** Ratings of replies. A reply is a turn's final answer: the assistant message that carries platform ids. */

function toRecord(row: typeof feedback.$inferSelect): FeedbackRecord {
  return {
    id: row.id,
    turnId: row.turnId,
    conversationKey: row.conversationKey,
    messageId: row.messageId,
    rater: { platform: row.platform, id: row.userId, ...(row.userName ? { name: row.userName } : {}) },
    rating: row.rating,
    comment: row.comment,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function feedbackRepository(db: Database): FeedbackRepository {
  /** The newest final answer matching `where`, with its turn and conversation. */
  async function reply(where: SQL | undefined): Promise<Omit<RatedReply, 'messageId'> | undefined> {
    const [row] = await db
      .select({ turnId: messages.turnId, conversationKey: conversations.key })
      .from(messages)
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      .where(
        and(
          eq(messages.role, 'assistant'),
          isNotNull(messages.turnId),
          isNotNull(messages.platformMessageIds),
          where,
        ),
      )
      .orderBy(desc(messages.id))
      .limit(1);
    return row?.turnId ? { turnId: row.turnId, conversationKey: row.conversationKey } : undefined;
  }

  return {
    async findReply({ platform, channel, messageId }) {
      const found = await reply(
        and(
          eq(conversations.platform, platform),
          eq(conversations.channel, channel),
          sql`${messages.platformMessageIds} @> ${JSON.stringify([messageId])}::jsonb`,
        ),
      );
      return found ? { ...found, messageId } : undefined;
    },

    async findTurn(turnId) {
      const found = await reply(eq(messages.turnId, turnId));
      return found ? { ...found, messageId: null } : undefined;
    },

    async save(input: NewFeedback) {
      const values = {
        conversationKey: input.conversationKey,
        turnId: input.turnId,
        messageId: input.messageId,
        platform: input.rater.platform,
        userId: input.rater.id,
        userName: input.rater.name ?? null,
        rating: input.rating,
        comment: input.comment ?? null,
      };
      const [row] = await db
        .insert(feedback)
        .values(values)
        .onConflictDoUpdate({
          target: [feedback.turnId, feedback.platform, feedback.userId],
          set: {
            rating: values.rating,
            messageId: sql`coalesce(excluded.message_id, ${feedback.messageId})`,
            userName: sql`coalesce(excluded.user_name, ${feedback.userName})`,
            // A comment explains a rating: kept while the rating stays, dropped when it changes.
            comment: sql`coalesce(excluded.comment,
              case when ${feedback.rating} = excluded.rating then ${feedback.comment} end)`,
            updatedAt: sql`now()`,
          },
        })
        .returning();
      if (!row) throw new Error('feedback was not stored');
      return toRecord(row);
    },

    async list({ cursor, limit }) {
      const rows = await db
        .select()
        .from(feedback)
        .where(before(cursor, feedback.updatedAt, feedback.id))
        .orderBy(desc(feedback.updatedAt), desc(feedback.id))
        .limit(limit + 1);
      return paged(rows, limit, (row) => encodeCursor(row.updatedAt, row.id), toRecord);
    },
  };
}
