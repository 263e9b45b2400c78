import { and, eq, gt, inArray, isNotNull, isNull, lt, lte } from 'drizzle-orm';
import type { InputWaitRecord, InputWaitRepository } from '../../core/contracts/input-waits.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { inputWaits } from '../schema.js';

type Row = typeof inputWaits.$inferSelect;

const toWait = (row: Row): InputWaitRecord => ({
  id: row.id,
  conversationKey: row.conversationKey,
  platform: row.platform,
  server: row.server,
  toolName: row.toolName,
  toolCallId: row.toolCallId,
  requests: row.requests,
  requestState: row.requestState,
  requestedBy: row.requestedBy,
  requesters: row.requesters,
  resume: row.resume ?? null,
  liveUntil: row.liveUntil ?? null,
  answers: row.answers,
  answeredBy: row.answeredBy ?? null,
  formMessageId: row.formMessageId,
  status: row.status,
  expiresAt: row.expiresAt,
  createdAt: row.createdAt,
});

const allAnswered = (wait: { requests: readonly { key: string }[]; answers: Record<string, unknown> }) =>
  wait.requests.every((request) => Object.hasOwn(wait.answers, request.key));

/** Input waits (`core/contracts/input-waits.ts`); an answer is taken under the row's lock, once. */
export function inputWaitRepository(db: Database): InputWaitRepository {
  return {
    async create(wait) {
      const { expiresAt, requestState, ...rest } = wait;
      const answered = allAnswered(wait);
      const [row] = await db
        .insert(inputWaits)
        .values({
          ...cleanJson(rest),
          // Opaque to Butler: stored byte for byte, never cleaned.
          requestState,
          expiresAt,
          ...(answered ? { status: 'answered' as const, endedAt: new Date() } : {}),
        })
        .returning();
      if (!row) throw new Error('input wait insert returned nothing');
      return toWait(row);
    },

    async get(id) {
      const [row] = await db.select().from(inputWaits).where(eq(inputWaits.id, id));
      return row && toWait(row);
    },

    async setFormMessage(id, messageId) {
      await db.update(inputWaits).set({ formMessageId: messageId }).where(eq(inputWaits.id, id));
    },

    async answer(id, key, response, by, now) {
      return db.transaction(async (tx) => {
        const [row] = await tx.select().from(inputWaits).where(eq(inputWaits.id, id)).for('update');
        if (!row?.requests.some((request) => request.key === key))
          return { status: 'refused', reason: 'missing' } as const;
        // A live question nobody vouches for any more: its call is gone, whatever the sweep has not seen yet.
        const orphaned = row.liveUntil !== null && row.liveUntil <= now;
        if (row.status !== 'waiting' || row.expiresAt <= now || orphaned)
          return { status: 'refused', reason: 'closed' } as const;
        if (Object.hasOwn(row.answers, key))
          return { status: 'refused', reason: 'answered_already' } as const;
        const answers = { ...row.answers, [key]: cleanJson(response) };
        const done = allAnswered({ requests: row.requests, answers });
        const [updated] = await tx
          .update(inputWaits)
          .set({
            answers,
            answeredBy: cleanJson(by),
            ...(done ? { status: 'answered' as const, endedAt: now } : {}),
          })
          .where(eq(inputWaits.id, id))
          .returning();
        if (!updated) throw new Error('input wait update returned nothing');
        return { status: done ? 'answered' : 'partly', wait: toWait(updated) } as const;
      });
    },

    async claimReminders(before, platforms) {
      if (platforms.length === 0) return [];
      const now = new Date();
      const rows = await db
        .update(inputWaits)
        .set({ remindedAt: now })
        .where(
          and(
            eq(inputWaits.status, 'waiting'),
            isNull(inputWaits.remindedAt),
            lte(inputWaits.createdAt, before),
            gt(inputWaits.expiresAt, now),
            inArray(inputWaits.platform, [...platforms]),
          ),
        )
        .returning();
      return rows.map(toWait);
    },

    async unshown(olderThan) {
      const rows = await db
        .select()
        .from(inputWaits)
        .where(
          and(
            eq(inputWaits.status, 'waiting'),
            isNull(inputWaits.formMessageId),
            // A live question's own process shows its form, or declines it.
            isNull(inputWaits.liveUntil),
            lt(inputWaits.createdAt, olderThan),
            gt(inputWaits.expiresAt, new Date()),
          ),
        );
      return rows.map(toWait);
    },

    async expireDue(now) {
      const rows = await db
        .update(inputWaits)
        .set({ status: 'expired', endedAt: now })
        .where(and(eq(inputWaits.status, 'waiting'), lte(inputWaits.expiresAt, now)))
        .returning();
      return rows.map(toWait);
    },

    async renewLive(id, until) {
      // A lease that ran out stays out: answers may have been refused meanwhile, and the sweep may lapse it.
      await db
        .update(inputWaits)
        .set({ liveUntil: until })
        .where(
          and(eq(inputWaits.id, id), eq(inputWaits.status, 'waiting'), gt(inputWaits.liveUntil, new Date())),
        );
    },

    async lapse(now, scope) {
      if ('platforms' in scope && scope.platforms.length === 0) return [];
      const which =
        'id' in scope
          ? and(eq(inputWaits.id, scope.id), isNotNull(inputWaits.liveUntil))
          : and(lt(inputWaits.liveUntil, now), inArray(inputWaits.platform, [...scope.platforms]));
      const rows = await db
        .update(inputWaits)
        .set({ status: 'lapsed', endedAt: now })
        .where(and(eq(inputWaits.status, 'waiting'), which))
        .returning();
      return rows.map(toWait);
    },
  };
}
