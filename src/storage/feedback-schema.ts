import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { Platform } from '../core/contracts/events.js';
import type { FeedbackRating } from '../core/contracts/feedback-records.js';

/**
 * Ratings of Butler's replies (re-exported by `schema.ts`, kept apart to keep that file readable): one per
 * person per turn, changed in place by a second click.
 */
export const feedback = pgTable(
  'feedback',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationKey: text('conversation_key').notNull(),
    /** Text like `turn_usage.turn_id`: turn ids are opaque to the core. */
    turnId: text('turn_id').notNull(),
    /** The platform message rated; null when the rating named the turn (the HTTP API). */
    messageId: text('message_id'),
    /** Who rated: their platform, id there and name when known. */
    platform: text('platform').$type<Platform>().notNull(),
    userId: text('user_id').notNull(),
    userName: text('user_name'),
    rating: text('rating').$type<FeedbackRating>().notNull(),
    comment: text('comment'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('feedback_rater_idx').on(table.turnId, table.platform, table.userId),
    index('feedback_recent_idx').on(table.updatedAt, table.id),
  ],
);
