import type { ApprovalService } from '../approvals/approval-service.js';
import { workspaceKeyPrefix } from '../contracts/conversation-key.js';
import type { Person } from '../contracts/events.js';
import type { Capabilities, HomeView } from '../contracts/read-models.js';
import type { Store } from '../contracts/store.js';

/** Pending requests read for one home page: more than any page shows (it says how many more). */
const pendingRead = 200;
const recentConversations = 5;

export const noCapabilities = (): Capabilities => ({ tools: [], agents: [] });

/**
 * A person's own page, read from the store: the pending requests of their platform that they may decide
 * (the same permission a decision checks) or that they asked for (through any of their identities: a task
 * their API key scheduled into a Slack channel included), their recent conversations, and what
 * Butler can do; in `workspace` only, when given (a member id names a person within one Slack workspace).
 * Decides nothing.
 */
export async function readHome(
  store: Store,
  approvals: ApprovalService,
  capabilities: () => Capabilities,
  person: Person,
  workspace?: string,
): Promise<HomeView> {
  const inWorkspace =
    workspace === undefined ? {} : { conversationKeyPrefix: workspaceKeyPrefix(person.platform, workspace) };
  const [pending, conversations] = await Promise.all([
    store.reads.approvals({
      status: 'pending',
      platform: person.platform,
      limit: pendingRead,
      ...inWorkspace,
    }),
    store.reads.recentConversations(person, recentConversations, workspace),
  ]);
  const now = new Date();
  const shown = pending.items.flatMap((approval) => {
    if (approval.expiresAt <= now) return [];
    const mayDecide = approvals.permission(approval, person).allowed;
    return mayDecide || approvals.askedBy(approval, person) ? [{ ...approval, mayDecide }] : [];
  });
  return { approvals: shown, conversations, capabilities: capabilities() };
}
