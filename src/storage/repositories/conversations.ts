import { and, asc, desc, eq, isNotNull, lte, sql } from 'drizzle-orm';
import type { StoredMessage } from '../../core/contracts/messages.js';
import type { ConversationRecord, ConversationRepository } from '../../core/contracts/store.js';
import { cleanJson, cleanText } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { approvals, compactions, conversations, messages } from '../schema.js';
import { preparedOnFirstUse } from './prepared.js';

export function toConversation(
  row: Omit<typeof conversations.$inferSelect, 'createdAt' | 'updatedAt'>,
): ConversationRecord {
  return {
    id: row.id,
    key: row.key,
    address: { platform: row.platform, workspace: row.workspace, channel: row.channel, thread: row.thread },
    summary: row.summary,
    summaryTokens: row.summaryTokens,
    lastCompactedAt: row.lastCompactedAt,
    tokenScale: row.tokenScale,
    promptTokensTotal: row.promptTokensTotal,
    completionTokensTotal: row.completionTokensTotal,
    compactionRetryAt: row.compactionRetryAt,
    inflight: row.inflight,
  };
}

export function toMessage(
  row: Omit<typeof messages.$inferSelect, 'conversationId' | 'compacted' | 'createdAt'>,
): StoredMessage {
  const base = { id: row.id, tokens: row.tokens, content: row.content };
  switch (row.role) {
    case 'user':
      return {
        ...base,
        role: 'user',
        ...(row.author === null ? {} : { author: row.author }),
        ...(row.files?.length ? { files: row.files } : {}),
      };
    case 'assistant':
      return {
        ...base,
        role: 'assistant',
        ...(row.toolCalls ? { toolCalls: row.toolCalls } : {}),
        ...(row.platformMessageIds ? { platformMessageIds: row.platformMessageIds } : {}),
      };
    case 'tool':
      return { ...base, role: 'tool', toolCallId: row.toolCallId ?? '' };
  }
}

/** How many recent replies and cards crash recovery compares a thread's messages against. */
const recentKnown = 20;

/**
 * Creates the conversation on first sight, else touches it; returns its row. Placeholders: `key` and the
 * address's `platform`, `workspace`, `channel`, `thread`. A turn runs it inside its opening read.
 */
export const ensureConversation = (db: Database) =>
  db
    .insert(conversations)
    .values({
      key: sql.placeholder('key'),
      platform: sql.placeholder('platform'),
      workspace: sql.placeholder('workspace'),
      channel: sql.placeholder('channel'),
      thread: sql.placeholder('thread'),
    })
    .onConflictDoUpdate({ target: conversations.key, set: { updatedAt: sql`now()` } })
    .returning();

export function conversationRepository(db: Database): ConversationRepository {
  const ensureStatement = preparedOnFirstUse(() =>
    ensureConversation(db).prepare('butler_conversation_ensure'),
  );
  const windowStatement = preparedOnFirstUse(() =>
    db
      .select()
      .from(messages)
      .where(
        and(eq(messages.conversationId, sql.placeholder('conversationId')), eq(messages.compacted, false)),
      )
      .orderBy(asc(messages.id))
      .prepare('butler_conversation_window'),
  );
  // Runs on every turn that posts a reply (up to twice).
  const inflightStatement = preparedOnFirstUse(() =>
    db
      .update(conversations)
      // Placeholders in SQL chunks skip the column's encoder: the caller passes the JSON text.
      .set({ inflight: sql`${sql.placeholder('inflight')}` })
      .where(eq(conversations.id, sql.placeholder('conversationId')))
      .prepare('butler_conversation_inflight'),
  );
  return {
    async find(key) {
      const [row] = await db.select().from(conversations).where(eq(conversations.key, key));
      return row ? toConversation(row) : undefined;
    },

    async ensure(key, address) {
      const [row] = await ensureStatement().execute({ key, ...address });
      if (!row) throw new Error(`Could not create conversation ${key}`);
      return toConversation(row);
    },

    async window(conversationId) {
      const rows = await windowStatement().execute({ conversationId });
      return rows.map(toMessage);
    },

    async append(conversationId, newMessages) {
      if (newMessages.length === 0) return;
      await db.insert(messages).values(
        cleanJson(newMessages).map((message) => ({
          conversationId,
          role: message.role,
          content: message.content,
          tokens: message.tokens,
          author: message.role === 'user' ? (message.author ?? null) : null,
          files: message.role === 'user' ? (message.files ?? null) : null,
          toolCalls: message.role === 'assistant' ? (message.toolCalls ?? null) : null,
          toolCallId: message.role === 'tool' ? message.toolCallId : null,
          platformMessageIds: message.role === 'assistant' ? (message.platformMessageIds ?? null) : null,
        })),
      );
    },

    async applyCompaction(conversationId, result) {
      await db.transaction(async (tx) => {
        await tx
          .update(conversations)
          .set({
            summary: cleanText(result.summary),
            summaryTokens: result.summaryTokens,
            lastCompactedAt: sql`now()`,
            compactionRetryAt: null,
          })
          .where(eq(conversations.id, conversationId));
        await tx
          .update(messages)
          .set({ compacted: true })
          .where(
            and(
              eq(messages.conversationId, conversationId),
              eq(messages.compacted, false),
              lte(messages.id, result.foldedThroughId),
            ),
          );
        await tx.insert(compactions).values({
          conversationId,
          tokensBefore: result.tokensBefore,
          tokensAfter: result.tokensAfter,
          messagesFolded: result.messagesFolded,
          model: result.model,
          durationMs: Math.round(result.durationMs),
        });
      });
    },

    async deferCompaction(conversationId, until) {
      await db
        .update(conversations)
        .set({ compactionRetryAt: until })
        .where(eq(conversations.id, conversationId));
    },

    async knownPlatformMessages(conversation) {
      // Only a retried turn asks, so these are plain queries rather than prepared ones.
      const [replies, cards] = await Promise.all([
        db
          .select({ ids: messages.platformMessageIds })
          .from(messages)
          .where(and(eq(messages.conversationId, conversation.id), isNotNull(messages.platformMessageIds)))
          .orderBy(desc(messages.id))
          .limit(recentKnown),
        db
          .select({ id: approvals.cardMessageId })
          .from(approvals)
          .where(and(eq(approvals.conversationKey, conversation.key), isNotNull(approvals.cardMessageId)))
          .orderBy(desc(approvals.createdAt))
          .limit(recentKnown),
      ]);
      return [...replies.flatMap((row) => row.ids ?? []), ...cards.flatMap((row) => row.id ?? [])];
    },

    async setInflight(conversationId, inflight) {
      await inflightStatement().execute({ conversationId, inflight: JSON.stringify(cleanJson(inflight)) });
    },
  };
}
