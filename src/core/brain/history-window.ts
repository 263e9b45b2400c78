import type { ConversationMessage } from '../contracts/messages.js';

/**
 * Pure helpers that cut a conversation history without ever separating a tool call from its result:
 * an assistant message and the tool messages answering it form one group.
 */

type Sized = ConversationMessage & { tokens: number };

/** Splits messages into groups that must stay together. */
export function groupMessages<T extends Sized>(messages: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (const message of messages) {
    const current = groups.at(-1);
    if (message.role === 'tool' && current) current.push(message);
    else groups.push([message]);
  }
  return groups;
}

const groupTokens = (group: readonly Sized[]) => group.reduce((sum, message) => sum + message.tokens, 0);

/**
 * Chooses what to fold into the summary: the oldest groups, keeping the newest groups whose tokens
 * fit in `keepTokens` (at least one group, so the latest exchange always survives verbatim).
 */
export function splitForCompaction<T extends Sized>(
  messages: readonly T[],
  keepTokens: number,
): { fold: T[]; keep: T[] } {
  const groups = groupMessages(messages);
  let kept = 0;
  let index = groups.length;
  while (index > 0) {
    const size = groupTokens(groups[index - 1] ?? []);
    if (index < groups.length && kept + size > keepTokens) break;
    kept += size;
    index -= 1;
  }
  return { fold: groups.slice(0, index).flat(), keep: groups.slice(index).flat() };
}

/** Drops the oldest groups until the rest fits in `budget` tokens (what is left may be empty). */
export function trimToFit<T extends Sized>(messages: readonly T[], budget: number): T[] {
  const groups = groupMessages(messages);
  let total = groups.reduce((sum, group) => sum + groupTokens(group), 0);
  let start = 0;
  while (start < groups.length && total > budget) {
    total -= groupTokens(groups[start] ?? []);
    start += 1;
  }
  return groups.slice(start).flat();
}
