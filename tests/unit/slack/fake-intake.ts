import { setTimeout as delay } from 'node:timers/promises';
import type { ButlerIntake } from '../../../src/core/adapter.js';
import type { ApprovalCard } from '../../../src/core/approval-card.js';
import type { DecisionResult } from '../../../src/core/approvals/decision.js';
import { encodeConversationKey } from '../../../src/core/conversation-key.js';
import type { ApprovalDecisionInput, ConversationAddress, InboundMessage } from '../../../src/core/events.js';

/** The core's intake, in memory: deduplicates like the inbox and records what the adapter handed over. */
export interface FakeIntake extends ButlerIntake {
  accepted: InboundMessage[];
  duplicates: InboundMessage[];
  decisions: ApprovalDecisionInput[];
  knownConversations: Set<string>;
  knowConversation(address: ConversationAddress): void;
  acceptDelayMs: number;
  acceptError: Error | undefined;
  decideDelayMs: number;
  decideWith: (input: ApprovalDecisionInput) => DecisionResult;
  calls: string[];
}

export const pendingCard: ApprovalCard = {
  approvalId: 'ap-1',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart payments-api',
  argumentsJson: '{"service":"payments-api"}',
  risk: 'high',
  requester: { id: 'U0ALICE' },
  whoMayApprove: 'an approver other than the requester',
  approverIds: ['U0APPROVER'],
  expiresAt: new Date('2026-11-20T13:00:00Z'),
};

export function createFakeIntake(): FakeIntake {
  const keys = new Set<string>();
  const intake: FakeIntake = {
    accepted: [],
    duplicates: [],
    decisions: [],
    knownConversations: new Set(),
    knowConversation(address) {
      intake.knownConversations.add(encodeConversationKey(address));
    },
    acceptDelayMs: 0,
    acceptError: undefined,
    decideDelayMs: 0,
    calls: [],
    decideWith: (input) => ({
      ok: true,
      card: {
        ...pendingCard,
        approvalId: input.approvalId,
        status: input.decision === 'approve' ? 'approved' : 'rejected',
        decidedBy: input.user,
        decidedAt: new Date('2026-11-20T12:03:00Z'),
        ...(input.reason ? { reason: input.reason } : {}),
      },
    }),
    async accept(message) {
      intake.calls.push('accept');
      await delay(intake.acceptDelayMs);
      if (intake.acceptError) throw intake.acceptError;
      if (keys.has(message.dedupKey)) {
        intake.duplicates.push(message);
        return { status: 'duplicate' };
      }
      keys.add(message.dedupKey);
      intake.accepted.push(message);
      return { status: 'accepted', eventId: intake.accepted.length };
    },
    async decide(input) {
      intake.calls.push('decide');
      await delay(intake.decideDelayMs);
      intake.decisions.push(input);
      return intake.decideWith(input);
    },
    async isKnownConversation(address) {
      intake.calls.push('isKnownConversation');
      return intake.knownConversations.has(encodeConversationKey(address));
    },
  };
  return intake;
}
