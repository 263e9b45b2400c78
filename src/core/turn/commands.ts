import type { ApprovalService } from '../approvals/approval-service.js';
import type { ApprovalGrant } from '../store.js';
import type { Turn } from './turn.js';

/**
 * Messages Butler answers itself instead of asking the model. `revoke` ends every standing approval
 * ("Approve for this conversation") in the conversation; only an approver may.
 */

const revokePattern = /^\s*revoke\s*[.!]?\s*$/i;

export function isRevokeCommand(text: string): boolean {
  return revokePattern.test(text);
}

function clock(date: Date): string {
  return `${date.toISOString().slice(11, 16)} UTC`;
}

function describeGrant(grant: ApprovalGrant): string {
  const by = grant.grantedBy.name ?? grant.grantedBy.id;
  return `- ${grant.toolName} (allowed by ${by} until ${clock(grant.expiresAt)})`;
}

/** Revokes the conversation's standing approvals for the turn's requester; returns the answer to show. */
export async function revokeStandingApprovals(approvals: ApprovalService, turn: Turn): Promise<string> {
  const outcome = await approvals.revokeGrants(
    turn.conversation.key,
    turn.target.address.platform,
    turn.requester,
  );
  if (!outcome.ok) return outcome.reason;
  if (outcome.revoked.length === 0) return 'There are no standing approvals in this conversation.';
  turn.log.info({ revoked: outcome.revoked.map((grant) => grant.id) }, 'standing approvals revoked');
  return [
    `Revoked ${outcome.revoked.length === 1 ? 'the standing approval' : `${outcome.revoked.length} standing approvals`} here; these tools ask again:`,
    ...outcome.revoked.map(describeGrant),
  ].join('\n');
}
