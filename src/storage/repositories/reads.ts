import { and, asc, desc, eq, gte, lt, lte, or, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { decodeConversationKey, workspaceKeyPrefix } from '../../core/contracts/conversation-key.js';
import {
  type ConversationListItem,
  decodeCursor,
  encodeCursor,
  type Page,
  type ReadRepository,
  type RecentConversation,
} from '../../core/contracts/read-models.js';
import type { Database } from '../database.js';
import { approvals, auditLog, compactions, conversations, inboundEvents, messages } from '../schema.js';
import { toApproval } from './approvals.js';
import { startsWith, startsWithAny } from './key-prefixes.js';

/** Newest-first pages for the API's read endpoints: keyset pagination on (time, id), never OFFSET. */

/** Rows strictly older than the cursor's row. */
export function before(cursor: string | undefined, time: PgColumn, id: PgColumn): SQL | undefined {
  const position = decodeCursor(cursor);
  if (!position) return undefined;
  return or(lt(time, position.at), and(eq(time, position.at), lt(id, position.id as never)));
}

/** Fetches one row more than asked to know whether there is a next page. */
export function paged<T, R>(
  rows: T[],
  limit: number,
  cursorOf: (row: T) => string,
  map: (row: T) => R,
): Page<R> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(map), nextCursor: rows.length > limit && last ? cursorOf(last) : null };
}

/** How many of a person's latest messages `recentConversations` reads, and how much of each one's text. */
const recentMessagesRead = 200;
const recentTextChars = 300;

const all = (...conditions: Array<SQLWrapper | undefined>) =>
  and(...conditions.filter((condition) => condition));

function listItem(row: typeof conversations.$inferSelect): ConversationListItem {
  return {
    key: row.key,
    address: { platform: row.platform, workspace: row.workspace, channel: row.channel, thread: row.thread },
    lastActivity: row.updatedAt,
    promptTokens: row.promptTokensTotal,
    completionTokens: row.completionTokensTotal,
  };
}

export function readRepository(db: Database): ReadRepository {
  return {
    async conversations({ cursor, limit, tenants }) {
      const rows = await db
        .select()
        .from(conversations)
        .where(
          all(
            before(cursor, conversations.updatedAt, conversations.id),
            startsWithAny(conversations.key, tenants),
          ),
        )
        .orderBy(desc(conversations.updatedAt), desc(conversations.id))
        .limit(limit + 1);
      return paged(rows, limit, (row) => encodeCursor(row.updatedAt, row.id), listItem);
    },

    async conversation(key, messageLimit) {
      const [row] = await db.select().from(conversations).where(eq(conversations.key, key));
      if (!row) return undefined;
      const [recent, folded] = await Promise.all([
        db
          .select()
          .from(messages)
          .where(eq(messages.conversationId, row.id))
          .orderBy(desc(messages.id))
          .limit(messageLimit),
        db
          .select()
          .from(compactions)
          .where(eq(compactions.conversationId, row.id))
          .orderBy(asc(compactions.id)),
      ]);
      return {
        ...listItem(row),
        summary: row.summary,
        messages: recent.reverse().map((message) => ({
          id: message.id,
          role: message.role,
          content: message.content,
          author: message.author,
          toolCalls: (message.toolCalls ?? []).map((call) => ({
            name: call.name,
            arguments: call.arguments,
          })),
          toolCallId: message.toolCallId,
          compacted: message.compacted,
          createdAt: message.createdAt,
        })),
        compactions: folded.map((compaction) => ({
          at: compaction.createdAt,
          model: compaction.model,
          tokensBefore: compaction.tokensBefore,
          tokensAfter: compaction.tokensAfter,
          messagesFolded: compaction.messagesFolded,
        })),
      };
    },

    async approvals({
      cursor,
      limit,
      status,
      platform,
      conversationKey,
      conversationKeyPrefix,
      since,
      tenants,
    }) {
      const rows = await db
        .select()
        .from(approvals)
        .where(
          all(
            status ? eq(approvals.status, status) : undefined,
            platform ? eq(approvals.platform, platform) : undefined,
            conversationKey ? eq(approvals.conversationKey, conversationKey) : undefined,
            conversationKeyPrefix ? startsWith(approvals.conversationKey, conversationKeyPrefix) : undefined,
            since ? gte(approvals.createdAt, since) : undefined,
            startsWithAny(approvals.conversationKey, tenants),
            before(cursor, approvals.createdAt, approvals.id),
          ),
        )
        .orderBy(desc(approvals.createdAt), desc(approvals.id))
        .limit(limit + 1);
      return paged(
        rows,
        limit,
        (row) => encodeCursor(row.createdAt, row.id),
        (row) => {
          const { resume: _resume, ...approval } = toApproval(row);
          return approval;
        },
      );
    },

    async recentConversations(person, limit, workspace) {
      // The person's latest messages (inbound_events_user_idx), one per conversation: a person who wrote
      // this many in one conversation lately has fewer conversations to list than asked.
      const rows = await db
        .select({
          key: inboundEvents.conversationKey,
          at: inboundEvents.createdAt,
          text: sql<string | null>`left(${inboundEvents.payload}->>'text', ${recentTextChars})`,
        })
        .from(inboundEvents)
        .where(
          and(
            eq(inboundEvents.platform, person.platform),
            eq(inboundEvents.userId, person.id),
            eq(inboundEvents.kind, 'message'),
            workspace === undefined
              ? undefined
              : startsWith(inboundEvents.conversationKey, workspaceKeyPrefix(person.platform, workspace)),
          ),
        )
        .orderBy(desc(inboundEvents.createdAt), desc(inboundEvents.id))
        .limit(recentMessagesRead);
      const recent = new Map<string, RecentConversation>();
      for (const row of rows) {
        if (recent.size >= limit) break;
        if (recent.has(row.key)) continue;
        const address = decodeConversationKey(row.key);
        const firstLine = (row.text ?? '').trim().split('\n')[0]?.trim() ?? '';
        recent.set(row.key, { address, lastMessageAt: row.at, firstLine });
      }
      return [...recent.values()];
    },

    async audit({ cursor, limit, tool, actor, since, until }) {
      const rows = await db
        .select()
        .from(auditLog)
        .where(
          all(
            tool ? eq(auditLog.toolName, tool) : undefined,
            actor
              ? or(
                  eq(auditLog.actor, actor),
                  eq(auditLog.decidedBy, actor),
                  sql`${auditLog.requesters} @> ${JSON.stringify([actor])}::jsonb`,
                )
              : undefined,
            since ? gte(auditLog.createdAt, since) : undefined,
            until ? lte(auditLog.createdAt, until) : undefined,
            before(cursor, auditLog.createdAt, auditLog.id),
          ),
        )
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .limit(limit + 1);
      return paged(
        rows,
        limit,
        (row) => encodeCursor(row.createdAt, row.id),
        (row) => ({
          id: row.id,
          conversationKey: row.conversationKey,
          approvalId: row.approvalId,
          grantId: row.grantId,
          agent: row.agent,
          profile: row.profile,
          toolName: row.toolName,
          toolCallId: row.toolCallId,
          arguments: row.arguments,
          risk: row.risk as never,
          decision: row.decision as never,
          outcome: row.outcome as never,
          actor: row.actor,
          requesters: row.requesters ?? [row.actor],
          decidedBy: row.decidedBy,
          error: row.error,
          durationMs: row.durationMs,
          createdAt: row.createdAt,
        }),
      );
    },
  };
}
