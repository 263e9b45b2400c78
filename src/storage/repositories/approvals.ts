import { and, asc, eq, gt, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { ApprovalRecord, ApprovalRepository } from '../../core/contracts/store.js';
import { cleanJson, cleanText } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { approvals } from '../schema.js';
import { startsWith } from './key-prefixes.js';

export function toApproval(row: typeof approvals.$inferSelect): ApprovalRecord {
  return {
    id: row.id,
    batchId: row.batchId ?? row.id,
    conversationKey: row.conversationKey,
    platform: row.platform,
    toolName: row.toolName,
    ...(row.origin ? { origin: row.origin } : {}),
    ...(row.agent && row.delegateCallId
      ? { agent: { name: row.agent, delegateCallId: row.delegateCallId } }
      : {}),
    toolCallId: row.toolCallId,
    arguments: row.arguments,
    risk: row.risk,
    summary: row.summary,
    requestedBy: row.requestedBy,
    requesters: row.requesters ?? [row.requestedBy],
    ...(row.confirmBy ? { confirmBy: row.confirmBy } : {}),
    approverIds: row.approverIds,
    expiresAt: row.expiresAt,
    resume: row.resume,
    status: row.status,
    decidedBy: row.decidedBy ? { platform: row.platform, ...row.decidedBy } : null,
    decidedAt: row.decidedAt,
    reason: row.reason,
    standingUntil: row.standingUntil,
    cardMessageId: row.cardMessageId,
    quorum: row.quorum,
    votes: row.votes,
    remindedAt: row.remindedAt,
    escalatedAt: row.escalatedAt,
    pausedAt: row.pausedAt,
    noticeCards: row.noticeCards,
    execution: row.execution,
    result: row.result,
    createdAt: row.createdAt,
  };
}

/** Namespaces the batch locks (the second key is the batch id's hash). */
const batchLockSpace = 7_461_003;

/** Rows of a batch; a row stored before batches (no batch id) is a batch of one under its own id. */
/**
 * Where a call stands in the step that made it: Butler's own calls by their place in its step; a sub-agent's
 * by the place of the `delegate` call that started the run, then by theirs in the agent's step.
 */
function callPosition(approval: ApprovalRecord): [number, number] {
  const calls = approval.resume.assistant.toolCalls.map((call) => call.id);
  const { agent } = approval;
  if (!agent) return [calls.indexOf(approval.toolCallId), -1];
  const frame = approval.resume.agents?.find((entry) => entry.delegateCallId === agent.delegateCallId);
  return [
    calls.indexOf(agent.delegateCallId),
    frame?.assistant.toolCalls.findIndex((call) => call.id === approval.toolCallId) ?? -1,
  ];
}

/**
 * A batch's calls in the order the model made them, which is how cards number them (`/approve 2`). They are
 * created in one transaction and share its time, so the time alone left their order to Postgres.
 */
function byCallOrder(left: ApprovalRecord, right: ApprovalRecord): number {
  const [leftStep, leftCall] = callPosition(left);
  const [rightStep, rightCall] = callPosition(right);
  return left.createdAt.getTime() - right.createdAt.getTime() || leftStep - rightStep || leftCall - rightCall;
}

const inBatch = (batchId: string) =>
  or(eq(approvals.batchId, batchId), and(isNull(approvals.batchId), eq(approvals.id, batchId)));

export function approvalRepository(db: Database): ApprovalRepository {
  return {
    async create(approval) {
      const { agent, confirmBy, ...rest } = cleanJson(approval);
      const [row] = await db
        .insert(approvals)
        .values({
          ...rest,
          confirmBy: confirmBy ?? null,
          agent: agent?.name ?? null,
          delegateCallId: agent?.delegateCallId ?? null,
        })
        .returning();
      if (!row) throw new Error('Could not create approval');
      return toApproval(row);
    },

    async get(id) {
      const [row] = await db.select().from(approvals).where(eq(approvals.id, id));
      return row ? toApproval(row) : undefined;
    },

    async listBatch(batchId) {
      const rows = await db
        .select()
        .from(approvals)
        .where(inBatch(batchId))
        .orderBy(asc(approvals.createdAt));
      return rows.map(toApproval).sort(byCallOrder);
    },

    async lockBatch(batchId) {
      await db.execute(sql`select pg_advisory_xact_lock(${batchLockSpace}, hashtext(${batchId}))`);
    },

    async setCardMessage(batchId, messageId) {
      await db.update(approvals).set({ cardMessageId: messageId }).where(inBatch(batchId));
    },

    async vote(id, vote, identities) {
      const [row] = await db
        .update(approvals)
        .set({ votes: sql`${approvals.votes} || ${JSON.stringify([cleanJson(vote)])}::jsonb` })
        .where(
          and(
            eq(approvals.id, id),
            eq(approvals.status, 'pending'),
            gt(approvals.expiresAt, sql`now()`),
            isNull(approvals.pausedAt),
            ...identities.map(
              (identity) =>
                sql`not ${approvals.votes} @> ${JSON.stringify([{ platform: identity.platform, id: identity.id }])}::jsonb`,
            ),
          ),
        )
        .returning();
      return row ? toApproval(row) : undefined;
    },

    async decide(id, decision) {
      // The status guard makes the first valid decision win, however many clicks race.
      const [row] = await db
        .update(approvals)
        .set({
          status: decision.status,
          decidedBy: cleanJson(decision.decidedBy),
          decidedAt: decision.at,
          reason: decision.reason === null ? null : cleanText(decision.reason),
          standingUntil: decision.standingUntil ?? null,
        })
        .where(
          and(
            eq(approvals.id, id),
            eq(approvals.status, 'pending'),
            gt(approvals.expiresAt, sql`now()`),
            isNull(approvals.pausedAt),
          ),
        )
        .returning();
      return row ? toApproval(row) : undefined;
    },

    async claimNotices(stage, postedBefore) {
      const column = stage === 'reminder' ? approvals.remindedAt : approvals.escalatedAt;
      const rows = await db
        .update(approvals)
        .set(stage === 'reminder' ? { remindedAt: sql`now()` } : { escalatedAt: sql`now()` })
        .where(
          and(
            sql`${approvals.status} = 'pending'`,
            gt(approvals.expiresAt, sql`now()`),
            isNull(approvals.pausedAt),
            isNull(column),
            sql`${approvals.cardMessageId} is not null`,
            // Counted from the ask, or from Butler's return after a pause: a pause does not make them due at once.
            sql`coalesce(${approvals.resumedAt}, ${approvals.createdAt}) <= ${postedBefore.toISOString()}::timestamptz`,
          ),
        )
        .returning({ batchId: approvals.batchId, id: approvals.id });
      return [...new Set(rows.map((row) => row.batchId ?? row.id))];
    },

    async addNoticeCard(batchId, notice) {
      await db
        .update(approvals)
        .set({ noticeCards: sql`${approvals.noticeCards} || ${JSON.stringify([cleanJson(notice)])}::jsonb` })
        .where(inBatch(batchId));
    },

    async expireDue(now, as) {
      const rows = await db
        .update(approvals)
        .set(
          as
            ? { status: 'rejected', decidedAt: now, reason: as.reason }
            : { status: 'expired', decidedAt: now },
        )
        // A literal status, so that the partial index on pending approvals serves prepared plans too.
        .where(
          and(
            sql`${approvals.status} = 'pending'`,
            lte(approvals.expiresAt, now),
            isNull(approvals.pausedAt),
          ),
        )
        .returning();
      return rows.map(toApproval);
    },

    async beginExecution(id) {
      const rows = await db
        .update(approvals)
        .set({ execution: 'running' })
        .where(and(eq(approvals.id, id), eq(approvals.status, 'approved'), isNull(approvals.execution)))
        .returning({ id: approvals.id });
      return rows.length > 0;
    },

    async releaseExecution(id) {
      await db
        .update(approvals)
        .set({ execution: null })
        .where(and(eq(approvals.id, id), eq(approvals.execution, 'running')));
    },

    async finishExecution(id, state, result) {
      await db
        .update(approvals)
        .set({ execution: state, result: cleanText(result) })
        .where(eq(approvals.id, id));
    },

    async listWithoutCard(before) {
      const rows = await db
        .select()
        .from(approvals)
        .where(
          and(
            eq(approvals.status, 'pending'),
            isNull(approvals.cardMessageId),
            isNull(approvals.pausedAt),
            lt(approvals.createdAt, before),
          ),
        );
      return rows.map(toApproval);
    },

    async countPending() {
      const [row] = await db
        .select({ pending: sql<number>`count(*)::int`.mapWith(Number) })
        .from(approvals)
        // A literal status, so that the partial index on pending approvals serves it.
        .where(sql`${approvals.status} = 'pending'`);
      return row?.pending ?? 0;
    },

    async pauseWhere(keyPrefix) {
      const paused = await db
        .update(approvals)
        .set({ pausedAt: sql`now()` })
        .where(
          and(
            sql`${approvals.status} = 'pending'`,
            startsWith(approvals.conversationKey, keyPrefix),
            isNull(approvals.pausedAt),
          ),
        )
        .returning({ id: approvals.id });
      return paused.length;
    },

    async resumeWhere(keyPrefix) {
      const resumed = await db
        .update(approvals)
        .set({
          expiresAt: sql`now() + (${approvals.expiresAt} - ${approvals.pausedAt})`,
          pausedAt: null,
          resumedAt: sql`now()`,
        })
        .where(
          and(
            sql`${approvals.status} = 'pending'`,
            startsWith(approvals.conversationKey, keyPrefix),
            isNotNull(approvals.pausedAt),
          ),
        )
        .returning({ id: approvals.id });
      return resumed.length;
    },
  };
}
