import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Live events written to a table instead of NOTIFY (re-exported by `schema.ts`): where LISTEN cannot work
 * (Butler behind a transaction pooler without DATABASE_DIRECT_URL), each process reads what is new here a few
 * times a second. Rows live for minutes; a live view wants only what happens now.
 */
export const busEvents = pgTable(
  'bus_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    payload: text('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('bus_events_created_idx').on(table.createdAt)],
);
