import type { ApprovalService } from '../approvals/approval-service.js';
import { utcDateTime } from '../contracts/approval-card.js';
import { onPlatform } from '../contracts/events.js';
import type { People } from '../contracts/people.js';
import type { ApprovalGrant, Store } from '../contracts/store.js';
import { formatUsageReport, startOfUtcDay, startOfUtcMonth } from '../usage/usage-report.js';
import { budgetSubject } from './budget-note.js';
import type { Turn, TurnRunnerDeps } from './turn.js';

/**
 * Messages Butler answers itself instead of asking the model. `revoke` ends every standing approval
 * ("Approve for this conversation") in the conversation; only an approver may. `usage` tells the
 * conversation's and the asker's token usage (the person's, through every identity of theirs), and cost when
 * priced, today and this month, and how much of each budget the turn counts toward is used.
 */

const revokePattern = /^\s*revoke\s*[.!]?\s*$/i;
const usagePattern = /^\s*usage\s*[.!?]?\s*$/i;

/** The answer to a message that is a command; undefined when it is not one. */
export async function answerCommand(
  deps: Pick<TurnRunnerDeps, 'approvals' | 'store' | 'budgets' | 'policy'>,
  turn: Turn,
  text: string,
): Promise<string | undefined> {
  if (isRevokeCommand(text)) return revokeStandingApprovals(deps.approvals, turn);
  if (usagePattern.test(text)) {
    const usage = await describeUsage(deps.store, deps.policy.people, turn);
    return [usage, ...(await describeBudgets(deps, turn))].join('\n');
  }
  return undefined;
}

export function isRevokeCommand(text: string): boolean {
  return revokePattern.test(text);
}

function describeGrant(grant: ApprovalGrant): string {
  const by = grant.grantedBy.name ?? grant.grantedBy.id;
  return `- ${grant.toolName} (allowed by ${by} until ${utcDateTime(grant.expiresAt)})`;
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

/** Where the turn's budgets stand; only informative, so a failed lookup leaves the lines out. */
async function describeBudgets(deps: Pick<TurnRunnerDeps, 'budgets'>, turn: Turn): Promise<string[]> {
  try {
    return (await deps.budgets?.describe(budgetSubject(turn))) ?? [];
  } catch (error) {
    turn.log.warn({ err: error }, 'could not measure the budgets for usage');
    return [];
  }
}

/**
 * This conversation's and the requester's usage (every identity of theirs) today and this month (UTC); the
 * turn asking is not in it yet.
 */
async function describeUsage(store: Store, people: People, turn: Turn, now = new Date()): Promise<string> {
  const today = startOfUtcDay(now);
  const month = startOfUtcMonth(now);
  const conversationKey = turn.conversation.key;
  const person = { users: people.identitiesOf(onPlatform(turn.requester, turn.target.address.platform)) };
  const [conversationToday, conversationMonth, personToday, personMonth] = await Promise.all([
    store.usage.totals({ conversationKey, since: today }),
    store.usage.totals({ conversationKey, since: month }),
    store.usage.totals({ ...person, since: today }),
    store.usage.totals({ ...person, since: month }),
  ]);
  return formatUsageReport({
    conversation: { today: conversationToday, month: conversationMonth },
    person: { today: personToday, month: personMonth },
    personName: turn.requester.name ?? turn.requester.id,
  });
}
