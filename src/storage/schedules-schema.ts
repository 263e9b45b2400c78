import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { Person } from '../core/contracts/events.js';
import type {
  ScheduleRunOutcome,
  ScheduleSource,
  ScheduleStatus,
} from '../core/contracts/schedule-records.js';

/**
 * Scheduled tasks and their runs (re-exported by `schema.ts`, kept apart to keep that file readable). A run's
 * slot is recorded once (its primary key): the transaction that records it also queues its inbox event and
 * moves the task on, so no slot is queued twice, by any process.
 */
export const schedules = pgTable(
  'schedules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationKey: text('conversation_key').notNull(),
    name: text('name'),
    source: text('source').$type<ScheduleSource>().notNull(),
    creator: jsonb('creator').$type<Person>().notNull(),
    prompt: text('prompt').notNull(),
    cron: text('cron'),
    runAt: timestamp('run_at', { withTimezone: true }),
    timezone: text('timezone').notNull(),
    anchor: text('anchor'),
    isDirect: boolean('is_direct').notNull().default(false),
    status: text('status').$type<ScheduleStatus>().notNull().default('active'),
    nextRunAt: timestamp('next_run_at', { withTimezone: true }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    lastOutcome: text('last_outcome').$type<ScheduleRunOutcome>(),
    failures: integer('failures').notNull().default(0),
    statusNote: text('status_note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    // The due scan reads only active tasks, soonest first.
    index('schedules_due_idx').on(table.nextRunAt).where(sql`${table.status} = 'active'`),
    index('schedules_conversation_idx').on(table.conversationKey, table.status),
    uniqueIndex('schedules_name_idx').on(table.name).where(sql`${table.name} is not null`),
  ],
);

export const scheduleRuns = pgTable(
  'schedule_runs',
  {
    scheduleId: uuid('schedule_id')
      .notNull()
      .references(() => schedules.id, { onDelete: 'cascade' }),
    slot: timestamp('slot', { withTimezone: true }).notNull(),
    outcome: text('outcome').$type<ScheduleRunOutcome>().notNull(),
    /** The inbox event that runs it; null for a skipped slot. */
    eventId: bigint('event_id', { mode: 'number' }),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.scheduleId, table.slot] })],
);
