import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import { decodeConversationKey } from '../../core/contracts/conversation-key.js';
import type { ApprovalGrant, GrantRepository } from '../../core/contracts/store.js';
import { cleanJson } from '../../core/text/index.js';
import type { Database } from '../database.js';
import { approvalGrants } from '../schema.js';

function toGrant(row: typeof approvalGrants.$inferSelect): ApprovalGrant {
  const grantedBy = { platform: decodeConversationKey(row.conversationKey).platform, ...row.grantedBy };
  return {
    id: row.id,
    conversationKey: row.conversationKey,
    toolName: row.toolName,
    risk: row.risk,
    grantedBy,
    grantors: row.grantors ?? [grantedBy],
    approvalId: row.approvalId,
    quorum: row.quorum,
    expiresAt: row.expiresAt,
  };
}

/** Standing approvals. A grant is live until it expires or is revoked; revoked ones are kept for the record. */
export function grantRepository(db: Database): GrantRepository {
  const live = (conversationKey: string, now: Date) =>
    and(
      eq(approvalGrants.conversationKey, conversationKey),
      isNull(approvalGrants.revokedAt),
      gt(approvalGrants.expiresAt, now),
    );
  return {
    async create(grant) {
      const [row] = await db.insert(approvalGrants).values(cleanJson(grant)).returning();
      if (!row) throw new Error('Could not create the standing approval');
      return toGrant(row);
    },

    async listActiveFor(conversationKey, toolName, now) {
      const rows = await db
        .select()
        .from(approvalGrants)
        .where(and(live(conversationKey, now), eq(approvalGrants.toolName, toolName)))
        .orderBy(desc(approvalGrants.expiresAt));
      return rows.map(toGrant);
    },

    async listActive(conversationKey, now) {
      const rows = await db
        .select()
        .from(approvalGrants)
        .where(live(conversationKey, now))
        .orderBy(desc(approvalGrants.expiresAt));
      return rows.map(toGrant);
    },

    async revokeActive(conversationKey, revokedBy, now) {
      const rows = await db
        .update(approvalGrants)
        .set({ revokedAt: now, revokedBy: cleanJson(revokedBy) })
        .where(live(conversationKey, now))
        .returning();
      return rows.map(toGrant);
    },
  };
}
