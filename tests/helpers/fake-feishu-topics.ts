import { randomUUID } from 'node:crypto';
import type { Json } from './fake-feishu-card-rules.js';
import { scopeMissingCode } from './fake-feishu-contact.js';

/**
 * Topics (`omt_…`) people started in the fake's topic groups, and `GET /open-apis/im/v1/messages` over them as
 * open.larksuite.com im-v1/message/list answers with `container_id_type=thread`: the topic's messages, its root
 * first, then the bot's replies in it, each item with `message_id`, `root_id`, `thread_id` and `deleted`.
 */

export interface FakeTopicMessage {
  messageId: string;
  threadId: string | undefined;
  chatId: string;
}

const listScopes = 'im:message, im:message:readonly, im:message.history:readonly';

export class FakeFeishuTopics {
  /** Each topic's root message and chat, by thread id. */
  readonly started = new Map<string, { chatId: string; rootId: string }>();
  /** When true, listing answers like an app without a message-reading scope (HTTP 400, code 99991672). */
  scopeMissing = false;
  /** Messages their senders recalled: listed with `deleted: true`, and a reply under one is refused. */
  readonly recalled = new Set<string>();

  /** A topic a person started in `chatId`: its thread id and root message id. */
  start(chatId: string): { threadId: string; rootId: string } {
    const suffix = randomUUID().replaceAll('-', '').slice(0, 16);
    const topic = { threadId: `omt_${suffix}`, rootId: `om_root${suffix}` };
    this.started.set(topic.threadId, { chatId, rootId: topic.rootId });
    return topic;
  }

  list(
    query: Record<string, string>,
    botMessages: Iterable<FakeTopicMessage>,
  ): { status: number; body: Json } {
    const error = (code: number, msg: string) => ({ status: 400, body: { code, msg } });
    if (this.scopeMissing)
      return error(
        scopeMissingCode,
        `Access denied. One of the following scopes is required: [${listScopes}].`,
      );
    if (query.container_id_type !== 'thread' || !query.container_id)
      return error(99992402, 'field validation failed: container_id_type, container_id');
    const threadId = query.container_id;
    const topic = this.started.get(threadId);
    const item = (messageId: string, chatId: string) => ({
      message_id: messageId,
      deleted: this.recalled.has(messageId),
      ...(topic ? { root_id: topic.rootId, thread_id: threadId } : { thread_id: threadId }),
      chat_id: chatId,
      msg_type: 'text',
    });
    const items = [
      ...(topic ? [item(topic.rootId, topic.chatId)] : []),
      ...[...botMessages]
        .filter((message) => message.threadId === threadId)
        .map((message) => item(message.messageId, message.chatId)),
    ];
    if (query.sort_type === 'ByCreateTimeDesc') items.reverse();
    const size = Number(query.page_size ?? 20);
    return {
      status: 200,
      body: { code: 0, msg: 'success', data: { has_more: items.length > size, items: items.slice(0, size) } },
    };
  }
}
