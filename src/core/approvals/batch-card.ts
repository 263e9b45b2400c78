import {
  type ApprovalCard,
  type ApprovalCardCall,
  cardArgumentsLimit,
  truncateText,
} from '../approval-card.js';
import type { ApprovalRecord } from '../store.js';
import type { ApprovalPolicy } from '../tools/policy.js';

/** A pending approval whose deadline passed before the sweeper got to it: shown, and treated, as expired. */
export function isPastDeadline(approval: ApprovalRecord, now = new Date()): boolean {
  return approval.status === 'pending' && approval.expiresAt <= now;
}

/** The position of the approval's call in the step that asked for it (cards list calls in that order). */
function callIndex(approval: ApprovalRecord): number {
  const index = approval.resume.assistant.toolCalls.findIndex((call) => call.id === approval.toolCallId);
  return index === -1 ? Number.MAX_SAFE_INTEGER : index;
}

function cardCall(
  approval: ApprovalRecord,
  policy: ApprovalPolicy,
  argumentsLimit: number,
): ApprovalCardCall {
  return {
    approvalId: approval.id,
    status: isPastDeadline(approval) ? 'expired' : approval.status,
    toolName: approval.toolName,
    ...(approval.origin ? { origin: approval.origin } : {}),
    summary: approval.summary,
    argumentsJson: truncateText(JSON.stringify(approval.arguments, null, 2), argumentsLimit),
    risk: approval.risk,
    whoMayApprove: policy.describe(approval.risk, approval.approverIds),
    ...(approval.decidedBy ? { decidedBy: approval.decidedBy } : {}),
    ...(approval.decidedAt ? { decidedAt: approval.decidedAt } : {}),
    ...(approval.reason ? { reason: approval.reason } : {}),
    ...(approval.standingUntil ? { standingUntil: approval.standingUntil } : {}),
  };
}

/** The card of a batch: every call in the order the model asked for them, each with its own state. */
export function batchCard(
  batch: readonly ApprovalRecord[],
  policy: ApprovalPolicy,
  standingApprovalHours: number,
): ApprovalCard {
  const [first] = batch;
  if (!first) throw new Error('an approval card needs at least one approval');
  const ordered = [...batch].sort((left, right) => callIndex(left) - callIndex(right));
  // Several calls share the room one call's arguments would have.
  const argumentsLimit = Math.max(200, Math.floor(cardArgumentsLimit / ordered.length));
  return {
    batchId: first.batchId,
    calls: ordered.map((approval) => cardCall(approval, policy, argumentsLimit)),
    requester: first.requestedBy,
    approverIds: first.approverIds,
    expiresAt: first.expiresAt,
    ...(standingApprovalHours > 0 ? { standingApprovalHours } : {}),
  };
}
