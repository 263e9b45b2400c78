import type { Logger } from '../../core/contracts/logger.js';
import type { FeishuApi } from './feishu-api-types.js';
import { type JsonRecord, recordField, recordsField, stringField } from './fields.js';
import { type MentionResolver, messageText } from './message-content.js';

/**
 * A merged forward (`merge_forward`, "Merged and Forwarded Message") as the model reads it: the messages it
 * holds, each with its author, nested forwards indented. Its event carries none of them; they come from
 * `GET /open-apis/im/v1/messages/:message_id`, read before the turn (the core's `prepare`).
 */

/** A forwarded history is read, not replayed whole: at most this many of its messages, and this much text. */
const maxMessages = 100;
const maxCharacters = 12_000;
/** Forwards inside forwards, read this deep; deeper ones stay a one-line note. */
const maxDepth = 3;

export const unreadableHistory = '[forwarded a chat history, which Butler could not open]';

interface ForwardedItem {
  id: string | undefined;
  forward: string | undefined;
  type: string;
  content: string;
  senderId: string | undefined;
  senderName: string | undefined;
  mentions: Map<string, string>;
  sentAt: number;
}

function toItem(raw: JsonRecord): ForwardedItem {
  const sender = recordField(raw, 'sender');
  const mentions = new Map<string, string>();
  for (const mention of recordsField(raw, 'mentions')) {
    const key = stringField(mention, 'key');
    const name = stringField(mention, 'name');
    if (key && name) mentions.set(key, name);
  }
  return {
    id: stringField(raw, 'message_id'),
    forward: stringField(raw, 'upper_message_id'),
    type: stringField(raw, 'msg_type') ?? 'unknown',
    content: stringField(recordField(raw, 'body'), 'content') ?? '',
    senderId: stringField(sender, 'id'),
    senderName: stringField(sender, 'sender_name'),
    mentions,
    sentAt: Number(stringField(raw, 'create_time') ?? Number.NaN),
  };
}

type NameOf = (openId: string) => Promise<string | undefined>;

/** Renders `forwardId`'s messages, oldest first, and those of the forwards inside it. */
async function renderForward(
  forwardId: string,
  children: Map<string, ForwardedItem[]>,
  nameOf: NameOf,
  depth: number,
  budget: { messages: number; characters: number; left: number },
): Promise<string[]> {
  const lines: string[] = [];
  const indent = '  '.repeat(depth);
  for (const item of children.get(forwardId) ?? []) {
    if (budget.messages >= maxMessages || budget.characters >= maxCharacters) {
      budget.left += 1;
      continue;
    }
    budget.messages += 1;
    // Only people (open_ids) have a contact entry; an app's message shows its app_id.
    const person = item.senderId?.startsWith('ou_') ? await nameOf(item.senderId) : undefined;
    const author = item.senderName ?? person ?? item.senderId ?? 'someone';
    const resolve: MentionResolver = (reference, name) => {
      const known = item.mentions.get(reference) ?? name;
      return known ? `@${known}` : reference;
    };
    const nestedId = item.type === 'merge_forward' && depth + 1 < maxDepth ? item.id : undefined;
    const text = nestedId
      ? '[forwarded a chat history]'
      : messageText(item.type, item.content, resolve).replace(/\n/g, `\n${indent}  `);
    const line = `${indent}${author}: ${text}`;
    budget.characters += line.length;
    lines.push(line);
    if (nestedId) lines.push(...(await renderForward(nestedId, children, nameOf, depth + 1, budget)));
  }
  return lines;
}

/**
 * The text of a merged forward, or `unreadableHistory` when Feishu will not give its messages (the bot left
 * the chat, a network failure): never throws.
 */
export async function forwardedHistoryText(
  api: Pick<FeishuApi, 'messageItems'>,
  messageId: string,
  nameOf: NameOf,
  logger: Logger,
): Promise<string> {
  let items: ForwardedItem[];
  try {
    items = (await api.messageItems(messageId)).map(toItem);
  } catch (error) {
    logger.warn({ messageId, err: error }, 'Feishu forwarded history could not be read');
    return unreadableHistory;
  }
  const children = new Map<string, ForwardedItem[]>();
  for (const item of items) {
    if (!item.forward) continue;
    const siblings = children.get(item.forward) ?? [];
    siblings.push(item);
    children.set(item.forward, siblings);
  }
  for (const siblings of children.values()) {
    siblings.sort((a, b) => (a.sentAt || 0) - (b.sentAt || 0));
  }
  const budget = { messages: 0, characters: 0, left: 0 };
  const lines = await renderForward(messageId, children, nameOf, 0, budget);
  if (lines.length === 0) return '[forwarded an empty chat history]';
  const more = budget.left > 0 ? [`[… and ${budget.left} more forwarded messages, not shown]`] : [];
  return ['[forwarded a chat history:]', ...lines, ...more].join('\n');
}
