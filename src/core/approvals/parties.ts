import { onPlatform, type Person } from '../contracts/events.js';
import type { ApprovalRecord } from '../contracts/store.js';

/**
 * The people an approval was asked for (and, for a personal call, the one who decides it), with the
 * approval's platform: the policy compares people by platform and id. The conversation says whose
 * approvers decide there (a channel profile's).
 */
export function decisionParties(
  approval: Pick<ApprovalRecord, 'requesters' | 'confirmBy' | 'platform' | 'conversationKey'>,
): {
  requesters: Person[];
  confirmBy: Person | undefined;
  conversationKey: string;
} {
  return {
    conversationKey: approval.conversationKey,
    requesters: approval.requesters.map((requester) => onPlatform(requester, approval.platform)),
    confirmBy: approval.confirmBy ? onPlatform(approval.confirmBy, approval.platform) : undefined,
  };
}
