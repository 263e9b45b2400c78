import { PayloadError } from '../../core/contracts/errors.js';
import type { FeishuUserIds } from './bot-identity.js';
import { arrayField, asRecord, type JsonRecord, recordField, stringField } from './fields.js';

/**
 * Typed views of the two events Butler handles, read from the EventDispatcher's flattened data
 * (header and event fields merged into one object; the SDK types them loosely).
 */

export interface FeishuMention extends FeishuUserIds {
  /** Per-message placeholder, e.g. `@_user_1`. */
  key: string;
  name: string | undefined;
}

export type ChatType = 'p2p' | 'group' | 'topic_group' | (string & {});

export interface MessageReceiveEvent {
  eventId: string;
  tenantKey: string;
  senderOpenId: string;
  senderType: string | undefined;
  messageId: string;
  rootId: string | undefined;
  threadId: string | undefined;
  chatId: string;
  chatType: ChatType;
  messageType: string;
  /** The message body as Feishu sends it: a JSON string whose shape depends on `messageType`. */
  content: string;
  /** Milliseconds since the epoch. */
  createTime: number;
  mentions: FeishuMention[];
}

/** The synchronous answer to `card.action.trigger`: a toast and, optionally, the card that replaces the clicked one. */
export interface CardActionResponse {
  toast?: { type: 'success' | 'info' | 'warning' | 'error'; content: string };
  card?: { type: 'raw'; data: JsonRecord };
}

export interface CardActionEvent {
  eventId: string | undefined;
  tenantKey: string | undefined;
  operatorOpenId: string;
  value: unknown;
  openMessageId: string | undefined;
  openChatId: string | undefined;
  /** When Feishu sent it, milliseconds since the epoch; NaN when the envelope did not say. */
  createTime: number;
  /** The clicker's time zone (IANA), as their client reports it, for times in the toast. */
  timezone: string | undefined;
  /** A form's values by field name, when the click submitted a form container. */
  formValue: Record<string, unknown> | undefined;
}

/**
 * Epoch milliseconds from an envelope's `create_time`, whatever its unit: message events carry
 * milliseconds, card callbacks microseconds (Feishu's callback examples), some older payloads seconds.
 */
export function epochMilliseconds(value: string | undefined): number {
  const number = Number(value);
  if (value === undefined || !Number.isFinite(number) || number <= 0) return Number.NaN;
  if (number >= 1e14) return Math.floor(number / 1000);
  if (number >= 1e11) return number;
  return number * 1000;
}

function required(value: string | undefined, name: string): string {
  if (value === undefined) throw new PayloadError(`Feishu event is missing ${name}`);
  return value;
}

/** `{open_id, user_id, union_id}` as events carry it: any of them may be absent or `""`. */
export function parseUserIds(record: JsonRecord | undefined): FeishuUserIds {
  return {
    openId: stringField(record, 'open_id'),
    userId: stringField(record, 'user_id'),
    unionId: stringField(record, 'union_id'),
  };
}

/** `mentions[]{key, id{open_id?, user_id?, union_id?}, name, tenant_key}` (oapi-sdk-go `MentionEvent`). */
function parseMention(value: unknown): FeishuMention | undefined {
  const record = asRecord(value);
  const key = stringField(record, 'key');
  if (!key) return undefined;
  return { key, ...parseUserIds(recordField(record, 'id')), name: stringField(record, 'name') };
}

export function parseMessageReceiveEvent(data: unknown): MessageReceiveEvent {
  const record = asRecord(data);
  const sender = recordField(record, 'sender');
  const message = recordField(record, 'message');
  if (!message) throw new PayloadError('Feishu im.message.receive_v1 has no message');
  const messageId = required(stringField(message, 'message_id'), 'message.message_id');
  const createTime = Number(stringField(message, 'create_time'));
  return {
    // v1 deliveries have no event id; the message id still identifies the delivery for logs.
    eventId: stringField(record, 'event_id') ?? stringField(record, 'uuid') ?? messageId,
    tenantKey: stringField(record, 'tenant_key') ?? required(stringField(sender, 'tenant_key'), 'tenant_key'),
    senderOpenId: required(
      stringField(recordField(sender, 'sender_id'), 'open_id'),
      'sender.sender_id.open_id',
    ),
    senderType: stringField(sender, 'sender_type'),
    messageId,
    rootId: stringField(message, 'root_id'),
    threadId: stringField(message, 'thread_id'),
    chatId: required(stringField(message, 'chat_id'), 'message.chat_id'),
    chatType: required(stringField(message, 'chat_type'), 'message.chat_type'),
    messageType: stringField(message, 'message_type') ?? 'unknown',
    content: stringField(message, 'content') ?? '{}',
    createTime: Number.isFinite(createTime) ? createTime : Number.NaN,
    mentions: arrayField(message, 'mentions')
      .map(parseMention)
      .filter((mention) => mention !== undefined),
  };
}

export function parseCardActionEvent(data: unknown): CardActionEvent {
  const record = asRecord(data);
  const context = recordField(record, 'context');
  return {
    eventId: stringField(record, 'event_id'),
    tenantKey: stringField(record, 'tenant_key'),
    operatorOpenId: required(stringField(recordField(record, 'operator'), 'open_id'), 'operator.open_id'),
    value: recordField(record, 'action')?.value,
    openMessageId: stringField(context, 'open_message_id'),
    openChatId: stringField(context, 'open_chat_id'),
    createTime: epochMilliseconds(stringField(record, 'create_time')),
    timezone: stringField(recordField(record, 'action'), 'timezone'),
    formValue: recordField(recordField(record, 'action'), 'form_value'),
  };
}
