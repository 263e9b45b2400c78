import {
  delivery,
  messageEvent,
  testAppId,
  testAppSecret,
  testEncryptKey,
  testVerificationToken,
} from '../../tests/unit/feishu/feishu-events.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  type SlackPost,
  sign,
  signingSecret,
} from '../../tests/unit/slack/payloads.js';
import type { OutgoingRequest } from './load.js';

/**
 * What Slack and Feishu send, built per request: signed Slack Events API posts (unique event ids and
 * `ts`), encrypted and signed Feishu webhooks. The payload builders are the tests' own.
 */

export const slackSecrets = { botToken: 'xoxb-bench', signingSecret };
export const feishuSecrets = {
  appId: testAppId,
  appSecret: testAppSecret,
  encryptKey: testEncryptKey,
  verificationToken: testVerificationToken,
};

let sequence = 0;

/** Slack user ids of the benchmark's workspace: `U0000000`, `U0000001`, … */
export function slackUserId(index: number): string {
  return `U${String(index).padStart(7, '0')}`;
}

/** A fresh, unique Slack `ts`: now, with a counter in the microseconds. */
export function freshTs(): string {
  sequence += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(sequence % 1_000_000).padStart(6, '0')}`;
}

function signedSlack(post: SlackPost): OutgoingRequest {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    body: post.body,
    headers: {
      'content-type': post.contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': sign(post.body, timestamp),
    },
  };
}

export interface MentionSpec {
  channel: string;
  user: string;
  ts?: string;
  text?: string;
}

const defaultQuestion = 'what is the status of the deploy?';

/**
 * A signed `app_mention` opening a new thread (its own `ts`): one new conversation. Its blocks carry the
 * mention as Slack does, a `user` element (the Chat SDK's Slack adapter decides "is this a mention" from
 * the blocks; the tests' payload spells it as literal text, which it reads as no mention).
 */
export function slackMention(spec: MentionSpec): { request: OutgoingRequest; ts: string } {
  const ts = spec.ts ?? freshTs();
  const question = spec.text ?? defaultQuestion;
  const event = {
    ...appMention({ channel: spec.channel, ts, user: spec.user, text: `<@U0BUTLER> ${question}` }),
    blocks: [
      {
        type: 'rich_text',
        block_id: 'b1',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'user', user_id: 'U0BUTLER' },
              { type: 'text', text: ` ${question}` },
            ],
          },
        ],
      },
    ],
  };
  return { request: signedSlack(asJson(envelope(event))), ts };
}

/** A signed block_actions form post: someone clicks Approve on a card. */
export function slackApproveClick(spec: {
  approvalId: string;
  channel: string;
  messageTs: string;
  threadTs: string;
  user: { id: string; name: string };
}): OutgoingRequest {
  return signedSlack(
    asForm(
      blockActions({
        approvalId: spec.approvalId,
        actionId: 'butler_approve',
        channel: spec.channel,
        messageTs: spec.messageTs,
        threadTs: spec.threadTs,
        user: spec.user,
      }),
    ),
  );
}

/** An encrypted, signed `im.message.receive_v1` @mentioning the bot in a group (new conversation). */
export function feishuMention(spec: { chatId: string; senderOpenId: string; text?: string }): {
  request: OutgoingRequest;
  messageId: string;
} {
  const payload = messageEvent({
    chatId: spec.chatId,
    senderOpenId: spec.senderOpenId,
    text: `@_user_1 ${spec.text ?? 'what is the status of the deploy?'}`,
  });
  const message = (payload.event as { message: { message_id: string } }).message;
  const { body, headers } = delivery(payload);
  return { request: { body, headers }, messageId: message.message_id };
}
