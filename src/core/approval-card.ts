import type { ChatUser } from './events.js';
import type { Risk } from './tools/tool.js';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';

/**
 * A platform-neutral description of an approval card. The core builds it; each adapter renders it
 * (Block Kit, Feishu card JSON 2.0, a terminal prompt). Buttons carry only `approvalId`: authority is
 * the database plus the clicking user from the platform's signed payload.
 */
export interface ApprovalCard {
  approvalId: string;
  status: ApprovalStatus;
  toolName: string;
  /** One line a person can read: what will happen. */
  summary: string;
  /** Tool arguments, pretty-printed JSON, already truncated to a card-friendly size. */
  argumentsJson: string;
  risk: Risk;
  requester: ChatUser;
  /** Who may decide, in words ("the requester or an approver", "an approver other than the requester"). */
  whoMayApprove: string;
  /** User ids of configured approvers, for mentions on the card. */
  approverIds: readonly string[];
  expiresAt: Date;
  /** Set once decided. */
  decidedBy?: ChatUser;
  decidedAt?: Date;
  reason?: string;
}

/** Longest argument text a card shows; platforms cap block text at ~3000 characters. */
export const cardArgumentsLimit = 1500;

export function truncateText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, Math.max(0, limit - 1))}…`;
}

function displayName(user: ChatUser): string {
  return user.name ?? user.id;
}

function clock(date: Date): string {
  return date.toISOString().slice(11, 16);
}

/** "Approved by Ana at 12:03" / "Rejected by Bo: not now" / "Expired": the outcome line every renderer shows. */
export function outcomeLine(card: ApprovalCard): string | undefined {
  switch (card.status) {
    case 'pending':
      return undefined;
    case 'expired':
      return 'Expired: no decision before the deadline; nothing was run.';
    case 'approved':
      return `Approved by ${card.decidedBy ? displayName(card.decidedBy) : 'someone'}${
        card.decidedAt ? ` at ${clock(card.decidedAt)} UTC` : ''
      }`;
    case 'rejected': {
      const who = card.decidedBy ? displayName(card.decidedBy) : 'someone';
      return `Rejected by ${who}${card.reason ? `: ${card.reason}` : ''}`;
    }
  }
}
