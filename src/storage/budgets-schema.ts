import { doublePrecision, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Budget warnings already posted (re-exported by `schema.ts`). The primary key is the "once": a note for a
 * budget's limit, period and fraction is posted by whoever inserts its row.
 */
export const budgetNotices = pgTable(
  'budget_notices',
  {
    budget: text('budget').notNull(),
    limitName: text('limit_name').notNull(),
    period: text('period').notNull(),
    threshold: doublePrecision('threshold').notNull(),
    conversationKey: text('conversation_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.budget, table.limitName, table.period, table.threshold] })],
);
