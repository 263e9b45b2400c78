import { and, asc, desc, eq, inArray, lte, notInArray, sql } from 'drizzle-orm';
import type { Identity } from '../../core/contracts/people.js';
import type {
  ScheduleRecord,
  ScheduleRepository,
  ScheduleRunOutcome,
} from '../../core/contracts/schedule-records.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { scheduleRuns, schedules } from '../schema.js';
import { inboxRepository } from './inbox.js';
import { startsWith } from './key-prefixes.js';

/** The outcomes that end a run; anything but `failed` ends a streak of failures. */
const finalOutcomes: readonly ScheduleRunOutcome[] = ['replied', 'parked', 'stopped', 'failed'];

/** Made by any of `creators`: none given matches nothing. */
const byCreators = (creators: readonly Identity[]) =>
  sql`(${sql.join(
    [
      sql`false`,
      ...creators.map(
        (creator) =>
          sql`${schedules.creator} @> ${JSON.stringify({ platform: creator.platform, id: creator.id })}::jsonb`,
      ),
    ],
    sql` or `,
  )})`;

export function scheduleRepository(db: Database): ScheduleRepository {
  return {
    async create(schedule) {
      const [row] = await db
        .insert(schedules)
        .values({ ...cleanJson(schedule), name: schedule.name ?? null })
        .returning();
      if (!row) throw new Error('schedule insert returned nothing');
      return row;
    },

    async get(id) {
      const [row] = await db.select().from(schedules).where(eq(schedules.id, id));
      return row;
    },

    async list(filter) {
      const conditions = [inArray(schedules.status, [...(filter.statuses ?? ['active', 'paused'])])];
      if (filter.conversationKey) conditions.push(eq(schedules.conversationKey, filter.conversationKey));
      if (filter.creators) conditions.push(byCreators(filter.creators));
      return db
        .select()
        .from(schedules)
        .where(and(...conditions))
        .orderBy(asc(schedules.nextRunAt), asc(schedules.createdAt))
        .limit(filter.limit ?? 100);
    },

    async countByStatus() {
      const rows = await db
        .select({ status: schedules.status, count: sql<number>`count(*)::int` })
        .from(schedules)
        // Done and cancelled tasks stay in the table as history: not counted at every scrape.
        .where(inArray(schedules.status, ['active', 'paused']))
        .groupBy(schedules.status);
      return Object.fromEntries(rows.map((row) => [row.status, row.count]));
    },

    async countActive(by) {
      const conditions = [eq(schedules.status, 'active')];
      if (by.creators) conditions.push(byCreators(by.creators));
      if (by.conversationKey) conditions.push(eq(schedules.conversationKey, by.conversationKey));
      const [row] = await db
        .select({ count: sql<number>`count(*)::int` })
        .from(schedules)
        .where(and(...conditions));
      return row?.count ?? 0;
    },

    async fireDue(now, limit, decide) {
      return db.transaction(async (tx) => {
        // Another process holding a due task is firing it: skip it rather than wait, and never fire it twice.
        const due = await tx
          .select()
          .from(schedules)
          .where(and(eq(schedules.status, 'active'), lte(schedules.nextRunAt, now)))
          .orderBy(asc(schedules.nextRunAt))
          .limit(limit)
          .for('update', { skipLocked: true });
        const inbox = inboxRepository(tx as unknown as Database, { groupCommit: false });
        const queued: number[] = [];
        for (const schedule of due) {
          const decision = decide(schedule);
          if (decision.missed.length > 0)
            await tx
              .insert(scheduleRuns)
              .values(
                decision.missed.map((slot) => ({
                  scheduleId: schedule.id,
                  slot,
                  outcome: 'skipped' as const,
                })),
              )
              .onConflictDoNothing();
          // The slot's row is taken first: a slot some earlier transaction recorded is never queued again.
          const [taken] = await tx
            .insert(scheduleRuns)
            .values({
              scheduleId: schedule.id,
              slot: decision.slot,
              outcome: decision.event ? 'queued' : 'skipped',
            })
            .onConflictDoNothing()
            .returning({ slot: scheduleRuns.slot });
          if (taken && decision.event) {
            const eventId = await inbox.insert(decision.event);
            if (eventId !== undefined) {
              queued.push(eventId);
              await tx
                .update(scheduleRuns)
                .set({ eventId })
                .where(and(eq(scheduleRuns.scheduleId, schedule.id), eq(scheduleRuns.slot, decision.slot)));
            }
          }
          await tx
            .update(schedules)
            .set({
              nextRunAt: decision.next,
              status: decision.next ? 'active' : 'done',
              ...(taken
                ? {
                    lastRunAt: decision.slot,
                    lastOutcome: decision.event ? ('queued' as const) : ('skipped' as const),
                  }
                : {}),
              updatedAt: now,
            })
            .where(eq(schedules.id, schedule.id));
        }
        return queued;
      });
    },

    async recordOutcome(scheduleId, slot, outcome) {
      return db.transaction(async (tx) => {
        const [run] = await tx
          .update(scheduleRuns)
          .set({ outcome })
          .where(
            and(
              eq(scheduleRuns.scheduleId, scheduleId),
              eq(scheduleRuns.slot, slot),
              // A run's first ending counts: a retried delivery of the same ending counts once.
              notInArray(scheduleRuns.outcome, [...finalOutcomes]),
            ),
          )
          .returning({ slot: scheduleRuns.slot });
        if (!run)
          return tx
            .select()
            .from(schedules)
            .where(eq(schedules.id, scheduleId))
            .then(([row]) => row);
        const [row] = await tx
          .update(schedules)
          .set({
            lastOutcome: outcome,
            failures: outcome === 'failed' ? sql`${schedules.failures} + 1` : 0,
            updatedAt: sql`now()`,
          })
          .where(eq(schedules.id, scheduleId))
          .returning();
        return row;
      });
    },

    async setStatus(id, change, from) {
      const [row] = await db
        .update(schedules)
        .set({
          status: change.status,
          statusNote: change.note,
          nextRunAt: change.nextRunAt,
          ...(change.status === 'active' ? { failures: 0 } : {}),
          updatedAt: sql`now()`,
        })
        .where(and(eq(schedules.id, id), inArray(schedules.status, [...from])))
        .returning();
      return row;
    },

    async pauseWhere(keyPrefix, note) {
      const paused = await db
        .update(schedules)
        .set({ status: 'paused', statusNote: note, updatedAt: sql`now()` })
        .where(and(startsWith(schedules.conversationKey, keyPrefix), eq(schedules.status, 'active')))
        .returning({ id: schedules.id });
      return paused.length;
    },

    async resumeWhere(keyPrefix, note) {
      // A run missed while paused is late by then: the next look skips it past the grace window, as after an outage.
      const resumed = await db
        .update(schedules)
        .set({ status: 'active', statusNote: null, failures: 0, updatedAt: sql`now()` })
        .where(
          and(
            startsWith(schedules.conversationKey, keyPrefix),
            eq(schedules.status, 'paused'),
            eq(schedules.statusNote, note),
          ),
        )
        .returning({ id: schedules.id });
      return resumed.length;
    },

    async runs(scheduleId, limit) {
      return db
        .select({
          scheduleId: scheduleRuns.scheduleId,
          slot: scheduleRuns.slot,
          outcome: scheduleRuns.outcome,
          at: scheduleRuns.at,
        })
        .from(scheduleRuns)
        .where(eq(scheduleRuns.scheduleId, scheduleId))
        .orderBy(desc(scheduleRuns.slot))
        .limit(limit);
    },

    async upsertNamed(schedule) {
      const values = { ...cleanJson(schedule) };
      const [row] = await db
        .insert(schedules)
        .values(values)
        .onConflictDoUpdate({
          target: schedules.name,
          targetWhere: sql`${schedules.name} is not null`,
          set: {
            conversationKey: values.conversationKey,
            creator: values.creator,
            prompt: values.prompt,
            cron: values.cron,
            runAt: values.runAt,
            timezone: values.timezone,
            isDirect: values.isDirect,
            // An unchanged entry keeps its place (and a paused one stays paused); a changed one starts over.
            nextRunAt: sql`case when ${schedules.cron} is not distinct from excluded.cron
              and ${schedules.timezone} = excluded.timezone
              and ${schedules.status} in ('active', 'paused') then ${schedules.nextRunAt}
              else excluded.next_run_at end`,
            status: sql`case when ${schedules.status} = 'paused' and ${schedules.cron} is not distinct from excluded.cron
              then 'paused' else 'active' end`,
            updatedAt: sql`now()`,
          },
        })
        .returning();
      if (!row) throw new Error('schedule upsert returned nothing');
      return row as ScheduleRecord;
    },

    async pruneRuns(before, limit) {
      // The table's key is two columns: the row's physical id picks the oldest `limit` in one statement.
      const deleted = await db
        .delete(scheduleRuns)
        .where(
          sql`ctid in (select ctid from ${scheduleRuns} where ${scheduleRuns.at} < ${before.toISOString()}::timestamptz order by ${scheduleRuns.at} limit ${limit})`,
        )
        .returning({ slot: scheduleRuns.slot });
      return deleted.length;
    },

    async cancelNamedExcept(keep) {
      const conditions = [eq(schedules.source, 'config'), inArray(schedules.status, ['active', 'paused'])];
      if (keep.length > 0) conditions.push(notInArray(schedules.name, [...keep]));
      const rows = await db
        .update(schedules)
        .set({
          status: 'cancelled',
          statusNote: 'removed from the config file',
          nextRunAt: null,
          updatedAt: sql`now()`,
        })
        .where(and(...conditions))
        .returning({ id: schedules.id });
      return rows.length;
    },
  };
}
