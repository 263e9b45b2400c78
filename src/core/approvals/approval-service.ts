import { type ApprovalCard, cardArgumentsLimit, truncateText } from '../approval-card.js';
import type { ApprovalDecisionInput } from '../events.js';
import type { Logger } from '../logger.js';
import type { Observer } from '../observer.js';
import type { ApprovalRecord, NewApproval, Store } from '../store.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { DecisionResult } from './decision.js';

/** Dedup key of the one resume event an approval may produce, whether decided or expired. */
export const resumeDedupKey = (approvalId: string) => `approval:${approvalId}`;

/** The continuation of a parked turn, as inbox work: at most one per approval. */
function enqueueResume(store: Store, approval: ApprovalRecord, userId: string) {
  return store.inbox.insert({
    platform: approval.platform,
    dedupKey: resumeDedupKey(approval.id),
    conversationKey: approval.conversationKey,
    userId,
    payload: { kind: 'resume', approvalId: approval.id },
  });
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function approvalCard(approval: ApprovalRecord, policy: ApprovalPolicy): ApprovalCard {
  return {
    approvalId: approval.id,
    status: approval.status,
    toolName: approval.toolName,
    summary: approval.summary,
    argumentsJson: truncateText(JSON.stringify(approval.arguments, null, 2), cardArgumentsLimit),
    risk: approval.risk,
    requester: approval.requestedBy,
    whoMayApprove: policy.describe(approval.risk, approval.approverIds),
    approverIds: approval.approverIds,
    expiresAt: approval.expiresAt,
    ...(approval.decidedBy ? { decidedBy: approval.decidedBy } : {}),
    ...(approval.decidedAt ? { decidedAt: approval.decidedAt } : {}),
    ...(approval.reason ? { reason: approval.reason } : {}),
  };
}

function alreadyDecided(approval: ApprovalRecord, policy: ApprovalPolicy): DecisionResult {
  const card = approvalCard(approval, policy);
  if (approval.status === 'expired' || (approval.status === 'pending' && approval.expiresAt <= new Date())) {
    // Past its deadline but not yet swept: show it as expired now, not with live buttons.
    return {
      ok: false,
      code: 'expired',
      message: 'This request has expired; nothing was run.',
      card: { ...card, status: 'expired' },
    };
  }
  const who = approval.decidedBy?.name ?? approval.decidedBy?.id ?? 'someone';
  return {
    ok: false,
    code: 'already_decided',
    message: `This request was already ${approval.status} by ${who}.`,
    card,
  };
}

/**
 * Approval decisions. A decision is checked against who clicked (from the platform's signed payload)
 * and the database; the first valid one wins atomically and enqueues the turn's continuation in the
 * same transaction, so a decision is never lost and never taken twice.
 */
export class ApprovalService {
  constructor(
    private readonly store: Store,
    private readonly policy: ApprovalPolicy,
    private readonly observer: Observer,
    private readonly logger: Logger,
    private readonly onWork: () => void,
  ) {}

  card(approval: ApprovalRecord): ApprovalCard {
    return approvalCard(approval, this.policy);
  }

  newApproval(input: Omit<NewApproval, 'approverIds'>): NewApproval {
    return { ...input, approverIds: this.policy.approversOn(input.platform) };
  }

  async decide(input: ApprovalDecisionInput): Promise<DecisionResult> {
    const log = this.logger.child({ approvalId: input.approvalId, platform: input.platform });
    const approval = uuidPattern.test(input.approvalId)
      ? await this.store.approvals.get(input.approvalId)
      : undefined;
    if (!approval || approval.platform !== input.platform) {
      return { ok: false, code: 'not_found', message: 'This approval request no longer exists.' };
    }
    if (approval.status !== 'pending' || approval.expiresAt <= new Date())
      return alreadyDecided(approval, this.policy);

    const permission = this.policy.mayDecide({
      risk: approval.risk,
      requester: approval.requestedBy,
      approverIds: approval.approverIds,
      user: input.user,
    });
    if (!permission.allowed) {
      log.info({ user: input.user.id }, 'approval click refused');
      return { ok: false, code: 'not_authorized', message: permission.reason, card: this.card(approval) };
    }

    const status = input.decision === 'approve' ? 'approved' : 'rejected';
    const decided = await this.store.transaction(async (tx) => {
      const row = await tx.approvals.decide(approval.id, {
        status,
        decidedBy: input.user,
        reason: input.decision === 'reject' ? input.reason?.trim() || null : null,
        at: new Date(),
      });
      if (row) await enqueueResume(tx, row, input.user.id);
      return row;
    });
    if (!decided) {
      const current = await this.store.approvals.get(approval.id);
      return alreadyDecided(current ?? approval, this.policy);
    }
    log.info({ user: input.user.id, status }, 'approval decided');
    this.observer.approvalDecided({
      approvalId: decided.id,
      conversationKey: decided.conversationKey,
      toolName: decided.toolName,
      risk: decided.risk,
      decision: input.decision,
      decidedBy: input.user.id,
    });
    this.onWork();
    return { ok: true, card: this.card(decided) };
  }

  /** Closes approvals past their deadline; each gets a resume event so the model is told. */
  async expireDue(now = new Date()): Promise<number> {
    const expired = await this.store.transaction(async (tx) => {
      const rows = await tx.approvals.expireDue(now);
      for (const row of rows) await enqueueResume(tx, row, row.requestedBy.id);
      return rows;
    });
    for (const row of expired) {
      this.logger.info({ approvalId: row.id, conversation: row.conversationKey }, 'approval expired');
      this.observer.approvalExpired({
        approvalId: row.id,
        conversationKey: row.conversationKey,
        toolName: row.toolName,
        risk: row.risk,
      });
    }
    if (expired.length > 0) this.onWork();
    return expired.length;
  }
}
