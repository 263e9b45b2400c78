import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { ConversationAddress, Platform } from '../contracts/events.js';
import type { ConversationApprovers } from '../tools/policy.js';

/**
 * A channel profile as configured (`channels:` in the config file): where it applies, and what it changes
 * there. Conversations it does not cover keep Butler's defaults.
 */
export interface ProfileRule {
  /** What traces, audit rows and the console show. */
  name: string;
  platform: Platform;
  /**
   * The channels it covers (a direct chat is a channel too, by its own id), or every conversation of one
   * workspace, direct chats included.
   */
  where: { channels: readonly string[] } | { workspace: string };
  /** Added to the system prompt after the operator's prompt. */
  instructions?: string;
  /** Names or `*` globs: only these tools are offered (absent: every tool). */
  tools?: readonly string[];
  /** Only these agents may be delegated to (absent: every agent). */
  agents?: readonly string[];
  approvers?: Omit<ConversationApprovers, 'platform'>;
}

function covers(rule: ProfileRule, address: ConversationAddress): boolean {
  if (rule.platform !== address.platform) return false;
  return 'workspace' in rule.where
    ? rule.where.workspace === address.workspace
    : rule.where.channels.includes(address.channel);
}

/** The first rule that covers the conversation: the one that applies there. */
export function firstCovering<Rule extends ProfileRule>(
  rules: readonly Rule[],
  address: ConversationAddress,
): Rule | undefined {
  return rules.find((rule) => covers(rule, address));
}

/**
 * Who decides in a conversation where its profile says so, for the approval policy (which asks by the
 * conversation key every approval carries).
 */
export function profileApprovers(
  rules: readonly ProfileRule[],
): (conversationKey: string) => ConversationApprovers | undefined {
  if (rules.every((rule) => rule.approvers === undefined)) return () => undefined;
  return (conversationKey) => {
    const address = decodeConversationKey(conversationKey);
    const approvers = firstCovering(rules, address)?.approvers;
    return approvers ? { platform: address.platform, ...approvers } : undefined;
  };
}
