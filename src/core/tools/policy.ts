import type { ChatUser, Platform } from '../events.js';
import type { Risk } from './tool.js';

/**
 * Who may let a tool call run. low: at once. medium: the requester or a configured approver.
 * high: a configured approver who is not the requester (separation of duties).
 * Fails closed: any risk other than exactly `low` needs approval, and only the listed cases may decide;
 * an error while deciding propagates and nothing is approved.
 */
export class ApprovalPolicy {
  constructor(private readonly approvers: Readonly<Partial<Record<Platform, readonly string[]>>>) {}

  approversOn(platform: Platform): string[] {
    return [...(this.approvers[platform] ?? [])];
  }

  needsApproval(risk: Risk): boolean {
    return risk !== 'low';
  }

  /** Whether `user` may decide a call of `risk` that `requester` asked for; `reason` explains a refusal. */
  mayDecide(input: {
    risk: Risk;
    requester: ChatUser;
    approverIds: readonly string[];
    user: ChatUser;
  }): { allowed: true } | { allowed: false; reason: string } {
    const isApprover = input.approverIds.includes(input.user.id);
    const isRequester = input.user.id === input.requester.id;
    if (input.risk === 'medium' && (isRequester || isApprover)) return { allowed: true };
    if (input.risk === 'high' && isApprover && !isRequester) return { allowed: true };
    if (input.risk === 'high' && isRequester) {
      return {
        allowed: false,
        reason: 'High-risk actions need an approver other than the person who asked.',
      };
    }
    return { allowed: false, reason: 'You are not allowed to decide this request.' };
  }

  /**
   * Whether `user` may approve every later call of a tool in the conversation (a standing approval). It
   * covers calls by anyone there, so only an approver may grant it; for high risk, not the requester.
   */
  mayGrant(input: {
    risk: Risk;
    requester: ChatUser;
    approverIds: readonly string[];
    user: ChatUser;
  }): { allowed: true } | { allowed: false; reason: string } {
    if (!input.approverIds.includes(input.user.id))
      return { allowed: false, reason: 'Only an approver can approve a tool for the whole conversation.' };
    if (input.risk === 'high' && input.user.id === input.requester.id)
      return {
        allowed: false,
        reason: 'High-risk actions need an approver other than the person who asked.',
      };
    return { allowed: true };
  }

  /** "Who may approve", in words, for cards. */
  describe(risk: Risk, approverIds: readonly string[]): string {
    if (risk === 'medium') return approverIds.length > 0 ? 'the requester or an approver' : 'the requester';
    if (risk === 'high') {
      return approverIds.length > 0
        ? 'an approver other than the requester'
        : 'nobody: no approver is configured';
    }
    return 'anyone (runs without approval)';
  }
}
