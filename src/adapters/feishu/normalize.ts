import { mainThread } from '../../core/conversation-key.js';
import type { InboundMessage } from '../../core/events.js';
import type { MessageReceiveEvent } from './event-payloads.js';
import { messageText } from './message-content.js';

export interface NormalizeContext {
  botOpenId: string;
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

/**
 * im.message.receive_v1 → InboundMessage. Group chats: only messages that mention the bot (by open_id; the
 * `@_user_N` keys are per message). The thread key is `thread_id`, else `root_id`, else the message itself;
 * direct chats share `main` unless the message is in a thread.
 */
export function normalizeMessageEvent(
  event: MessageReceiveEvent,
  context: NormalizeContext,
): NormalizeResult {
  const { botOpenId } = context;
  if ((event.senderType !== undefined && event.senderType !== 'user') || event.senderOpenId === botOpenId) {
    return { kind: 'skip', reason: 'not_from_user' };
  }
  if (
    Number.isFinite(event.createTime) &&
    context.nowMilliseconds - event.createTime > context.maxAgeMilliseconds
  ) {
    return { kind: 'skip', reason: 'too_old' };
  }
  const isDirect = event.chatType === 'p2p';
  const isMention = event.mentions.some((mention) => mention.openId === botOpenId);
  if (!isDirect && !isMention) return { kind: 'skip', reason: 'not_mentioned' };

  const replacements = new Map(
    event.mentions.map((mention) => [
      mention.key,
      mention.openId === botOpenId ? '' : `@${mention.name ?? 'someone'}`,
    ]),
  );
  const text = messageText(
    event.messageType,
    event.content,
    (key) => replacements.get(key) ?? (key === '@_all' ? '@all' : key),
  );
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
    },
  };
}
