import { onPlatform, type Person } from '../contracts/events.js';
import type { ApprovalRecord } from '../contracts/store.js';

/**
 * The people an approval was asked for (and, for a personal call, the one who decides it), with the
 * approval's platform: the policy compares people by platform and id.
 */
export function decisionParties(approval: Pick<ApprovalRecord, 'requesters' | 'confirmBy' | 'platform'>): {
  requesters: Person[];
  confirmBy: Person | undefined;
} {
  return {
    requesters: approval.requesters.map((requester) => onPlatform(requester, approval.platform)),
    confirmBy: approval.confirmBy ? onPlatform(approval.confirmBy, approval.platform) : undefined,
  };
}
