import { type ApprovalCard, type Decision, pendingCalls } from '../../core/contracts/approval-card.js';
import type { ApprovalDecisionInput, ChatUser } from '../../core/contracts/events.js';

/** The terminal's stand-ins for a card's buttons. */
const decisions = {
  '/approve': 'approve',
  '/reject': 'reject',
  '/approve-conversation': 'approve_for_conversation',
} as const satisfies Record<string, Decision>;

export type ApprovalCommand = keyof typeof decisions;

export type ResolvedCommand = { ok: true; input: ApprovalDecisionInput } | { ok: false; message: string };

export function isApprovalCommand(command: string | undefined): command is ApprovalCommand {
  return command !== undefined && Object.hasOwn(decisions, command);
}

/**
 * Turns `/approve [n|all]`, `/reject [n|all] [reason]` or `/approve-conversation [n]` into a decision on
 * the waiting card. Without a number the command means the one call still pending. On a card of one call
 * the whole argument is the reason, as it was before cards had several calls.
 */
export function resolveApprovalCommand(
  card: ApprovalCard,
  command: ApprovalCommand,
  argument: string,
  user: ChatUser,
): ResolvedCommand {
  const decision = decisions[command];
  const pending = pendingCalls(card);
  if (pending.length === 0) return { ok: false, message: 'No approval is waiting.' };
  let target: { approvalId: string } | { batchId: string } | undefined;
  let reason = argument;
  if (card.calls.length > 1) {
    const [word = '', ...rest] = argument.split(/\s+/);
    if (word.toLowerCase() === 'all') {
      target = { batchId: card.batchId };
      reason = rest.join(' ');
    } else if (/^\d+$/.test(word)) {
      const call = card.calls[Number(word) - 1];
      if (!call)
        return { ok: false, message: `There is no action ${word}; the card has ${card.calls.length}.` };
      target = { approvalId: call.approvalId };
      reason = rest.join(' ');
    }
  }
  if (decision === 'approve_for_conversation' && target && 'batchId' in target)
    return {
      ok: false,
      message: 'Approving for this conversation goes one tool at a time: /approve-conversation <n>.',
    };
  if (!target) {
    const [only] = pending;
    if (pending.length > 1 || !only) {
      const all = decision === 'approve_for_conversation' ? '' : `, or ${command} all`;
      return { ok: false, message: `${pending.length} actions are waiting: ${command} <n> for one${all}.` };
    }
    target = { approvalId: only.approvalId };
  }
  return {
    ok: true,
    input: {
      platform: 'console',
      user,
      decision,
      ...target,
      ...(decision === 'reject' && reason ? { reason } : {}),
    },
  };
}
