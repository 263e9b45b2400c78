import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The Butler processes sharing this database, by the platform budgets each paces (re-exported by
 * `schema.ts`): a row per process, refreshed by its heartbeat. Processes that share a workspace's budget
 * split it by how many are alive (app/pacing-shares.ts).
 */
export const butlerProcesses = pgTable('butler_processes', {
  id: text('id').primaryKey(),
  /** Budgets this process paces: `slack:<team>`, `feishu:<app id>`. */
  budgets: jsonb('budgets').$type<string[]>().notNull(),
  seenAt: timestamp('seen_at', { withTimezone: true }).notNull().defaultNow(),
});
