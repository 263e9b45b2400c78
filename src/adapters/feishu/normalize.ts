import { mainThread } from '../../core/contracts/conversation-key.js';
import type { InboundMessage } from '../../core/contracts/events.js';
import { type FeishuBotIdentity, isBot, isBotId } from './bot-identity.js';
import type { FeishuMention, MessageReceiveEvent } from './event-payloads.js';
import { atReferences, type MentionResolver, messageText } from './message-content.js';
import { messageFiles } from './message-files.js';

export interface NormalizeContext {
  bot: FeishuBotIdentity;
  nowMilliseconds: number;
  /** Messages older than this when they arrive (redelivery after an outage) are skipped. */
  maxAgeMilliseconds: number;
}

export type SkipReason = 'not_from_user' | 'too_old' | 'not_mentioned';

export type NormalizeResult =
  | { kind: 'message'; message: InboundMessage }
  | { kind: 'skip'; reason: SkipReason };

/** Feishu thread ids start with `omt_`; message ids with `om_`. */
export function isThreadId(id: string): boolean {
  return id.startsWith('omt_');
}

const placeholderPattern = /^@_user_\d+$/;
const everyonePattern = /^(@_all|all|all_members)$/;

/**
 * How another person's mention reads: their name, else their open_id (`prepare` swaps it for the name from the
 * contact API), else a neutral word.
 */
function mentionLabel(name: string | undefined, openId: string | undefined): string {
  if (name) return `@${name}`;
  return openId ? `@${openId}` : '@someone';
}

function mentionResolver(bot: FeishuBotIdentity, mentions: FeishuMention[]): MentionResolver {
  const byKey = new Map(mentions.map((mention) => [mention.key, mention]));
  return (reference, name) => {
    if (everyonePattern.test(reference)) return '@all';
    const mention = byKey.get(reference);
    if (mention) return isBot(bot, mention) ? '' : mentionLabel(mention.name ?? name, mention.openId);
    if (isBotId(bot, reference)) return '';
    // A placeholder without its mentions[] entry: keep what the person saw.
    if (placeholderPattern.test(reference)) return name ? `@${name}` : reference;
    return mentionLabel(name, reference.startsWith('ou_') ? reference : undefined);
  };
}

/**
 * Mentioned by a `mentions[]` entry (on any id the bot's identity has; the `@_user_N` keys are per message), or by
 * a post's `at` tag that carries the bot's id: such a post may come with `mentions: []`.
 */
function mentionsBot(bot: FeishuBotIdentity, event: MessageReceiveEvent): boolean {
  if (event.mentions.some((mention) => isBot(bot, mention))) return true;
  return atReferences(event.messageType, event.content).some((reference) => isBotId(bot, reference));
}

/**
 * im.message.receive_v1 → InboundMessage. Group chats: only messages that mention the bot. The thread key is
 * `thread_id`, else `root_id`, else the message itself; direct chats share `main` unless the message is in a thread.
 */
export function normalizeMessageEvent(
  event: MessageReceiveEvent,
  context: NormalizeContext,
): NormalizeResult {
  const { bot } = context;
  if ((event.senderType !== undefined && event.senderType !== 'user') || event.senderOpenId === bot.openId) {
    return { kind: 'skip', reason: 'not_from_user' };
  }
  if (
    Number.isFinite(event.createTime) &&
    context.nowMilliseconds - event.createTime > context.maxAgeMilliseconds
  ) {
    return { kind: 'skip', reason: 'too_old' };
  }
  const isDirect = event.chatType === 'p2p';
  const isMention = mentionsBot(bot, event);
  if (!isDirect && !isMention) return { kind: 'skip', reason: 'not_mentioned' };

  const files = messageFiles(event.messageId, event.messageType, event.content);
  const text = messageText(event.messageType, event.content, mentionResolver(bot, event.mentions), {
    filesFetched: files.length > 0,
  });
  const thread = isDirect
    ? (event.threadId ?? mainThread)
    : (event.threadId ?? event.rootId ?? event.messageId);
  const sentAt = Number.isFinite(event.createTime) ? event.createTime : context.nowMilliseconds;

  return {
    kind: 'message',
    message: {
      kind: 'message',
      address: { platform: 'feishu', workspace: event.tenantKey, channel: event.chatId, thread },
      messageId: event.messageId,
      eventId: event.eventId,
      dedupKey: event.messageId,
      user: { id: event.senderOpenId },
      text,
      isMention,
      isDirect,
      sentAt: new Date(sentAt).toISOString(),
      ...(event.messageType === 'merge_forward' ? { forwardsHistory: true } : {}),
      ...(files.length > 0 ? { files } : {}),
    },
  };
}
