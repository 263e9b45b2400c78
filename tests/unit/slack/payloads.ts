import { createHmac } from 'node:crypto';

/**
 * Real-shaped Slack payloads (fields as Slack sends them: docs.slack.dev event reference, hackage
 * slack-web golden files) and a signing client for `POST /slack/events`. Shared by unit and
 * integration tests.
 */

export const team = 'T0BUTLER';
export const botUserId = 'U0BUTLER';
export const botId = 'B0BUTLER';
export const signingSecret = 'test-signing-secret';

let eventCounter = 0;

export function envelope(event: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  eventCounter += 1;
  return {
    token: 'legacy-verification-token',
    team_id: team,
    context_team_id: team,
    context_enterprise_id: null,
    api_app_id: 'A0BUTLER',
    event,
    type: 'event_callback',
    event_id: `Ev${String(eventCounter).padStart(8, '0')}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { enterprise_id: null, team_id: team, user_id: botUserId, is_bot: true, is_enterprise_install: false },
    ],
    is_ext_shared_channel: false,
    event_context: `4-eyJldCI6ImFwcF9tZW50aW9uIn0-${eventCounter}`,
    ...overrides,
  };
}

function richText(text: string) {
  return [
    {
      type: 'rich_text',
      block_id: 'b1',
      elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }],
    },
  ];
}

export function appMention(options: {
  channel?: string;
  ts: string;
  user?: string;
  text?: string;
  threadTs?: string;
}) {
  const text = options.text ?? `<@${botUserId}> what is the status of the deploy?`;
  return {
    type: 'app_mention',
    client_msg_id: `c-${options.ts}`,
    user: options.user ?? 'U0ALICE',
    text,
    ts: options.ts,
    team,
    channel: options.channel ?? 'C0GENERAL',
    event_ts: options.ts,
    blocks: richText(text),
    ...(options.threadTs ? { thread_ts: options.threadTs, parent_user_id: 'U0ALICE' } : {}),
  };
}

export function userMessage(options: {
  channel?: string;
  channelType?: 'channel' | 'group' | 'im' | 'mpim';
  ts: string;
  user?: string;
  text?: string;
  threadTs?: string;
  extra?: Record<string, unknown>;
}) {
  const text = options.text ?? 'and how long will it take?';
  return {
    type: 'message',
    client_msg_id: `c-${options.ts}`,
    user: options.user ?? 'U0ALICE',
    text,
    ts: options.ts,
    team,
    channel: options.channel ?? 'C0GENERAL',
    event_ts: options.ts,
    channel_type: options.channelType ?? 'channel',
    blocks: richText(text),
    ...(options.threadTs ? { thread_ts: options.threadTs, parent_user_id: 'U0ALICE' } : {}),
    ...options.extra,
  };
}

export function directMessage(options: { ts: string; text?: string; threadTs?: string; user?: string }) {
  return userMessage({
    ...options,
    channel: 'D0ALICE',
    channelType: 'im',
    text: options.text ?? 'hi Butler, can you help?',
  });
}

/** A modern app's own chat.postMessage as it comes back: no subtype, with bot_id and the bot user. */
export function ownMessage(options: { channel?: string; ts: string; threadTs?: string }) {
  return {
    type: 'message',
    text: 'Here is what I found.',
    user: botUserId,
    bot_id: botId,
    app_id: 'A0BUTLER',
    bot_profile: { id: botId, app_id: 'A0BUTLER', name: 'Butler', deleted: false, team_id: team },
    ts: options.ts,
    team,
    channel: options.channel ?? 'C0GENERAL',
    event_ts: options.ts,
    channel_type: 'channel',
    ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
  };
}

export function otherBotMessage(options: { channel?: string; ts: string; threadTs?: string }) {
  return {
    ...ownMessage(options),
    user: 'U0DEPLOYBOT',
    bot_id: 'B0DEPLOYBOT',
    app_id: 'A0DEPLOYBOT',
    text: `<@${botUserId}> deploy finished`,
  };
}

export function messageChanged(options: { channel?: string; ts: string }) {
  const channel = options.channel ?? 'C0GENERAL';
  return {
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    message: {
      type: 'message',
      user: 'U0ALICE',
      text: 'edited text',
      ts: '1700000000.000100',
      edited: { user: 'U0ALICE', ts: options.ts },
    },
    previous_message: { type: 'message', user: 'U0ALICE', text: 'original text', ts: '1700000000.000100' },
    channel,
    ts: options.ts,
    event_ts: options.ts,
    channel_type: 'channel',
  };
}

export function blockActions(options: {
  approvalId: string;
  actionId: 'butler_approve' | 'butler_reject';
  user?: { id: string; name: string };
  channel?: string;
  messageTs: string;
  threadTs?: string;
}) {
  const user = options.user ?? { id: 'U0APPROVER', name: 'approver' };
  const channel = options.channel ?? 'C0GENERAL';
  return {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: team },
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: options.messageTs,
      channel_id: channel,
      is_ephemeral: false,
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    },
    trigger_id: '1337.42.abcdef',
    team: { id: team, domain: 'butler-test' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: channel, name: 'general' },
    message: {
      type: 'message',
      user: botUserId,
      bot_id: botId,
      ts: options.messageTs,
      text: 'Approval needed',
      ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    },
    state: { values: {} },
    response_url: 'https://hooks.slack.com/actions/T0BUTLER/1/abc',
    actions: [
      {
        action_id: options.actionId,
        block_id: 'butler_approval',
        text: {
          type: 'plain_text',
          text: options.actionId === 'butler_approve' ? 'Approve' : 'Reject',
          emoji: true,
        },
        value: options.approvalId,
        style: options.actionId === 'butler_approve' ? 'primary' : 'danger',
        type: 'button',
        action_ts: '1700000001.000000',
      },
    ],
  };
}

export function rejectSubmission(options: {
  approvalId: string;
  channel?: string;
  messageTs: string;
  threadTs?: string;
  reason?: string;
  user?: { id: string; name: string };
}) {
  const user = options.user ?? { id: 'U0APPROVER', name: 'approver' };
  const metadata = {
    approvalId: options.approvalId,
    channel: options.channel ?? 'C0GENERAL',
    messageTs: options.messageTs,
    ...(options.threadTs ? { threadTs: options.threadTs } : {}),
  };
  return {
    type: 'view_submission',
    team: { id: team, domain: 'butler-test' },
    user: { id: user.id, username: user.name, name: user.name, team_id: team },
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    trigger_id: '1337.43.abcdef',
    view: {
      id: 'V0REASON',
      type: 'modal',
      callback_id: 'butler_reject_reason',
      private_metadata: JSON.stringify(metadata),
      state: {
        values: { reason: { reason_input: { type: 'plain_text_input', value: options.reason ?? null } } },
      },
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

export function sign(rawBody: string, timestamp: number, secret = signingSecret): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

export interface SlackPost {
  body: string;
  contentType: string;
}

export const asJson = (payload: unknown): SlackPost => ({
  body: JSON.stringify(payload),
  contentType: 'application/json',
});
export const asForm = (payload: unknown): SlackPost => ({
  body: `payload=${encodeURIComponent(JSON.stringify(payload))}`,
  contentType: 'application/x-www-form-urlencoded',
});

/** POSTs to `/slack/events` the way Slack does: signed over the raw body. */
export async function postToSlack(
  url: string,
  post: SlackPost,
  options: {
    timestamp?: number;
    secret?: string;
    signature?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature =
    options.signature === undefined ? sign(post.body, timestamp, options.secret) : options.signature;
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': post.contentType,
      'x-slack-request-timestamp': String(timestamp),
      ...(signature === null ? {} : { 'x-slack-signature': signature }),
      ...options.headers,
    },
    body: post.body,
  });
}
