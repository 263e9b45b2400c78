import { and, desc, eq, gte, inArray, lt, lte, or, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Identity } from '../../core/contracts/people.js';
import type { UsageGroup, UsageRepository, UsageRollup, UsageTotals } from '../../core/contracts/store.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { turnUsage } from '../schema.js';
import { startsWithAny } from './key-prefixes.js';

/**
 * Per-turn usage and its roll-ups. Every time filter also bounds `day`, so that the (…, day) indexes
 * narrow the rows before `created_at` is checked.
 */

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Turns any of `users` asked (one person's identities); none given matches nothing. */
const byUsers = (users: readonly Identity[]) =>
  or(
    sql`false`,
    ...users.map((user) =>
      and(
        sql`coalesce(${turnUsage.userPlatform}, ${turnUsage.platform}) = ${user.platform}`,
        eq(turnUsage.userId, user.id),
      ),
    ),
  );

// Sums of int columns are bigint (strings in postgres.js): read as numbers.
const total = (column: SQLWrapper) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);

const sums = {
  turns: sql<number>`count(*)::int`,
  promptTokens: total(turnUsage.promptTokens),
  completionTokens: total(turnUsage.completionTokens),
  compactionTokens: total(turnUsage.compactionTokens),
  costUsd: sql<number | null>`sum(${turnUsage.costUsd})`.mapWith(Number),
};

const allTokens = sql`sum(${turnUsage.promptTokens} + ${turnUsage.completionTokens} + ${turnUsage.compactionTokens})`;

const groupKeys: Record<UsageGroup, SQL<string>> = {
  conversation: sql<string>`${turnUsage.conversationKey}`,
  workspace: sql<string>`${turnUsage.workspace}`,
  channel: sql<string>`${turnUsage.workspace} || '/' || ${turnUsage.channel}`,
  user: sql<string>`${turnUsage.platform} || ':' || ${turnUsage.userId}`,
  day: sql<string>`to_char(${turnUsage.day}, 'YYYY-MM-DD')`,
};

function period(since: Date | undefined, until: Date | undefined) {
  return [
    since ? gte(turnUsage.day, utcDay(since)) : undefined,
    since ? gte(turnUsage.createdAt, since) : undefined,
    until ? lte(turnUsage.day, utcDay(until)) : undefined,
    until ? lt(turnUsage.createdAt, until) : undefined,
  ];
}

const asTotals = (row: UsageTotals | undefined): UsageTotals => ({
  turns: row?.turns ?? 0,
  promptTokens: row?.promptTokens ?? 0,
  completionTokens: row?.completionTokens ?? 0,
  compactionTokens: row?.compactionTokens ?? 0,
  costUsd: row?.costUsd ?? null,
});

export function usageRepository(db: Database): UsageRepository {
  return {
    async record({ at, ...row }) {
      await db
        .insert(turnUsage)
        .values({ ...cleanJson(row), ...(at ? { day: utcDay(at), createdAt: at } : {}) });
    },

    async rollup({ groupBy, since, until, limit, tenants }) {
      const key = groupKeys[groupBy];
      const query = db
        .select({ key, ...sums })
        .from(turnUsage)
        .where(and(...period(since, until), startsWithAny(turnUsage.conversationKey, tenants)))
        .groupBy(key)
        .orderBy(groupBy === 'day' ? desc(key) : desc(allTokens), key);
      const rows: UsageRollup[] = limit === undefined ? await query : await query.limit(limit);
      return rows;
    },

    async totals({ conversationKey, platform, workspace, channel, users, since }) {
      const [row] = await db
        .select(sums)
        .from(turnUsage)
        .where(
          and(
            conversationKey !== undefined ? eq(turnUsage.conversationKey, conversationKey) : undefined,
            platform !== undefined ? sql`${turnUsage.platform} = ${platform}` : undefined,
            workspace !== undefined ? eq(turnUsage.workspace, workspace) : undefined,
            channel !== undefined ? eq(turnUsage.channel, channel) : undefined,
            users !== undefined ? byUsers(users) : undefined,
            ...period(since, undefined),
          ),
        );
      return asTotals(row);
    },

    async byConversation(keys) {
      if (keys.length === 0) return new Map();
      const rows = await db
        .select({ key: turnUsage.conversationKey, ...sums })
        .from(turnUsage)
        .where(inArray(turnUsage.conversationKey, [...keys]))
        .groupBy(turnUsage.conversationKey);
      return new Map(rows.map(({ key, ...totals }) => [key, totals]));
    },
  };
}
