import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { cardMessages } from '../../helpers/core-intake.js';
import { deliver } from '../../helpers/deliver.js';

/**
 * What Feishu sends: real-shaped im.message.receive_v1 and card.action.trigger envelopes (v2 schema), encrypted
 * with the Encrypt Key and signed like the platform does. Shared by unit and integration tests.
 */

export type Json = Record<string, unknown>;

export const testAppId = 'cli_a1b2c3d4e5f60718';
export const testAppSecret = 'test-app-secret';
export const testEncryptKey = 'test-encrypt-key';
export const testVerificationToken = 'test-verification-token';
export const testTenantKey = '2ca1d211f64f6438';
export const testBotOpenId = 'ou_bot_butler';
export const aliceOpenId = 'ou_alice0000000000000000000000001';
export const bobOpenId = 'ou_bob00000000000000000000000000002';

let counter = 0;
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(16)}${counter.toString(16).padStart(4, '0')}`;
}

/**
 * One `mentions[]` entry: `{key, id{open_id?, user_id?, union_id?}, name, tenant_key}` (oapi-sdk-go
 * `MentionEvent`). Leave `openId` out for an entry that carries only `user_id` / `union_id`.
 */
export interface MentionSpec {
  key: string;
  openId?: string;
  userId?: string;
  unionId?: string;
  name?: string;
}

export function botMention(key = '@_user_1'): MentionSpec {
  return { key, openId: testBotOpenId, name: 'Butler' };
}

export interface MessageSpec {
  messageId?: string;
  eventId?: string;
  chatId?: string;
  chatType?: 'p2p' | 'group' | 'topic_group';
  messageType?: string;
  /** For text messages; placeholders such as `@_user_1` as Feishu writes them. */
  text?: string;
  /** Raw content object for other types. */
  content?: Json;
  mentions?: MentionSpec[];
  threadId?: string;
  rootId?: string;
  senderOpenId?: string;
  createTime?: number;
  token?: string;
}

export function messageEvent(spec: MessageSpec = {}): Json {
  const messageId = spec.messageId ?? uniqueId('om_');
  const createTime = String(spec.createTime ?? Date.now());
  const content = spec.content ?? { text: spec.text ?? '@_user_1 hello' };
  return {
    schema: '2.0',
    header: {
      event_id: spec.eventId ?? uniqueId('ev'),
      event_type: 'im.message.receive_v1',
      create_time: createTime,
      token: spec.token ?? testVerificationToken,
      app_id: testAppId,
      tenant_key: testTenantKey,
    },
    event: {
      sender: {
        sender_id: { union_id: 'on_union', user_id: 'user_1', open_id: spec.senderOpenId ?? aliceOpenId },
        sender_type: 'user',
        tenant_key: testTenantKey,
      },
      message: {
        message_id: messageId,
        ...(spec.rootId ? { root_id: spec.rootId, parent_id: spec.rootId } : {}),
        ...(spec.threadId ? { thread_id: spec.threadId } : {}),
        create_time: createTime,
        update_time: createTime,
        chat_id: spec.chatId ?? 'oc_group_chat',
        chat_type: spec.chatType ?? 'group',
        message_type: spec.messageType ?? 'text',
        content: JSON.stringify(content),
        mentions: (spec.mentions ?? (spec.chatType === 'p2p' ? [] : [botMention()])).map((mention) => ({
          key: mention.key,
          id: {
            union_id: mention.unionId ?? 'on_x',
            user_id: mention.userId ?? '',
            ...(mention.openId ? { open_id: mention.openId } : {}),
          },
          ...(mention.name ? { name: mention.name } : {}),
          tenant_key: testTenantKey,
        })),
        user_agent: 'Mozilla/5.0 Lark/7.30',
      },
    },
  };
}

/** A `post` body as received: `{title, content: [[element…]…]}`, optionally with the top-level `files[]`. */
export function postContent(paragraphs: Json[][], extra: Json = {}): Json {
  return { title: '', content: paragraphs, ...extra };
}

/**
 * Another event type in the v2 envelope, e.g. `im.message.message_read_v1` with its `event` body as the SDK's
 * typed handles describe it (`@larksuiteoapi/node-sdk` types, `EventDispatcher.register`).
 */
export function otherEvent(eventType: string, event: Json): Json {
  return {
    schema: '2.0',
    header: {
      event_id: uniqueId('ev'),
      event_type: eventType,
      create_time: String(Date.now()),
      token: testVerificationToken,
      app_id: testAppId,
      tenant_key: testTenantKey,
    },
    event,
  };
}

export interface CardActionSpec {
  operatorOpenId?: string;
  value: unknown;
  messageId?: string;
  chatId?: string;
  eventId?: string;
  token?: string;
  /** When Feishu sent it, epoch milliseconds; the envelope carries microseconds. Default: now. */
  createTime?: number;
  /** A submitted form container's values by field name. */
  formValue?: Json;
}

export function cardActionEvent(spec: CardActionSpec): Json {
  return {
    schema: '2.0',
    header: {
      event_id: spec.eventId ?? uniqueId('ev'),
      token: spec.token ?? testVerificationToken,
      create_time: String((spec.createTime ?? Date.now()) * 1000),
      event_type: 'card.action.trigger',
      tenant_key: testTenantKey,
      app_id: testAppId,
    },
    event: {
      operator: {
        tenant_key: testTenantKey,
        user_id: 'user_x',
        open_id: spec.operatorOpenId ?? aliceOpenId,
        union_id: 'on_x',
      },
      token: 'c-delayed-update-token',
      action: {
        value: spec.value,
        tag: 'button',
        name: 'approve',
        timezone: 'Asia/Shanghai',
        form_value: spec.formValue ?? {},
      },
      host: 'im_message',
      context: {
        url: '',
        preview_token: '',
        open_message_id: spec.messageId ?? cardMessages.feishu,
        open_chat_id: spec.chatId ?? 'oc_group_chat',
      },
    },
  };
}

export function challengePayload(challenge: string, token = testVerificationToken): Json {
  return { challenge, token, type: 'url_verification' };
}

/** base64(iv || AES-256-CBC(plaintext)), key = SHA-256(encrypt key): Feishu's scheme, written independently of src. */
export function encrypt(plaintext: string, encryptKey = testEncryptKey): string {
  const key = createHash('sha256').update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final()]).toString('base64');
}

export interface DeliveryOptions {
  encryptKey?: string | undefined;
  /** Seconds; default now. */
  timestamp?: number;
  nonce?: string;
  /** Sign with another key (a forged request). */
  signingKey?: string;
  /** Leave the signature headers out. */
  unsigned?: boolean;
  /** Send plaintext even though a key is given (the key still signs). */
  plaintext?: boolean;
}

/** The exact body and headers Feishu would POST for `payload`. */
export function delivery(
  payload: Json,
  options: DeliveryOptions = {},
): { body: string; headers: Record<string, string> } {
  const encryptKey = 'encryptKey' in options ? options.encryptKey : testEncryptKey;
  const json = JSON.stringify(payload);
  const body =
    encryptKey && !options.plaintext ? JSON.stringify({ encrypt: encrypt(json, encryptKey) }) : json;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (encryptKey && !options.unsigned) {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const nonce = options.nonce ?? uniqueId('nonce');
    const signingKey = options.signingKey ?? encryptKey;
    headers['x-lark-request-timestamp'] = timestamp;
    headers['x-lark-request-nonce'] = nonce;
    headers['x-lark-signature'] = createHash('sha256')
      .update(timestamp + nonce + signingKey + body)
      .digest('hex');
  }
  return { body, headers };
}

export async function postToButler(
  url: string,
  payload: Json,
  options: DeliveryOptions = {},
): Promise<{ status: number; body: Json }> {
  const { body, headers } = delivery(payload, options);
  const response = await deliver(url, { method: 'POST', body, headers });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}
