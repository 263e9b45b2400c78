import { createHmac } from 'node:crypto';
import { deliver } from '../../helpers/deliver.js';

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

/**
 * `event` as the Events API delivers it to the installation of workspace `teamId`, whose bot user is `botUser`:
 * the team on the event, the envelope and its authorization.
 */
export function envelopeFor(teamId: string, event: Record<string, unknown>, botUser = botUserId) {
  const authorization = { enterprise_id: null, team_id: teamId, user_id: botUser, is_bot: true };
  return envelope(
    { ...event, team: teamId },
    { team_id: teamId, context_team_id: teamId, authorizations: [authorization] },
  );
}

/** A card click as a member of workspace `teamId` sends it: the team on the payload and on the person. */
export function clickFrom(teamId: string, options: Parameters<typeof blockActions>[0]) {
  const body = blockActions(options);
  return { ...body, team: { id: teamId, domain: 'other' }, user: { ...body.user, team_id: teamId } };
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

/** Card buttons as Butler renders them: action id → label, style and the block they sit in. */
const cardButtons = {
  butler_approve: { text: 'Approve', style: 'primary', blockId: 'butler_approval' },
  butler_reject: { text: 'Reject', style: 'danger', blockId: 'butler_approval' },
  butler_approve_conversation: {
    text: 'Approve for this conversation (8 h)',
    style: undefined,
    blockId: 'butler_approval',
  },
  butler_approve_all: { text: 'Approve all', style: 'primary', blockId: 'butler_batch' },
  butler_reject_all: { text: 'Reject all', style: 'danger', blockId: 'butler_batch' },
  butler_show_arguments: { text: 'Show all arguments', style: undefined, blockId: 'butler_approval' },
  butler_show_arguments_batch: { text: 'Show all arguments', style: undefined, blockId: 'butler_batch' },
} as const;

export type CardActionId = keyof typeof cardButtons;

/**
 * A click on an approval card button. Per-call buttons carry `approvalId`; "Approve all" / "Reject all"
 * carry `batchId`.
 */
export function blockActions(options: {
  approvalId?: string;
  batchId?: string;
  actionId: CardActionId;
  /** The actions block the button sits in (a multi-call card has one per call: `butler_call_0`…). */
  blockId?: string;
  user?: { id: string; name: string };
  channel?: string;
  messageTs: string;
  threadTs?: string;
}) {
  const user = options.user ?? { id: 'U0APPROVER', name: 'approver' };
  const channel = options.channel ?? 'C0GENERAL';
  const button = cardButtons[options.actionId];
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
        block_id: options.blockId ?? button.blockId,
        text: { type: 'plain_text', text: button.text, emoji: true },
        value: options.batchId ?? options.approvalId,
        ...(button.style ? { style: button.style } : {}),
        type: 'button',
        action_ts: '1700000001.000000',
      },
    ],
  };
}

/** The reject-reason modal's submission; its private_metadata names `approvalId` or (for "Reject all") `batchId`. */
export function rejectSubmission(options: {
  approvalId?: string;
  batchId?: string;
  channel?: string;
  messageTs: string;
  threadTs?: string;
  reason?: string;
  user?: { id: string; name: string };
}) {
  const user = options.user ?? { id: 'U0APPROVER', name: 'approver' };
  const metadata = {
    ...(options.approvalId ? { approvalId: options.approvalId } : {}),
    ...(options.batchId ? { batchId: options.batchId } : {}),
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
  return deliver(url, {
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

/**
 * A message forwarded (shared) into a conversation: the original sits in `attachments[]` with `is_share` and
 * `is_msg_unfurl`, its author, channel and permalink, and its blocks under `message_blocks` (shape of real
 * deliveries: hackage slack-web golden `share_with_message.json` / `share_without_message.json`).
 */
export function sharedAttachment(options: {
  text: string;
  authorId?: string;
  authorName?: string;
  channelId?: string;
  channelName?: string | null;
  ts?: string;
}) {
  const channelId = options.channelId ?? 'C0INCIDENTS';
  const ts = options.ts ?? '1700000000.000100';
  const link = `https://butler-test.slack.com/archives/${channelId}/p${ts.replace('.', '')}`;
  return {
    ts,
    author_id: options.authorId ?? 'U0BOB',
    channel_id: channelId,
    channel_team: team,
    ...(options.channelName === null ? {} : { channel_name: options.channelName ?? 'incidents' }),
    is_msg_unfurl: true,
    message_blocks: [{ team, channel: channelId, ts, message: { blocks: richText(options.text) } }],
    color: 'D0D0D0',
    from_url: link,
    is_share: true,
    fallback: `[November 14th, 2023 10:13 PM] ${options.authorName ?? 'bob'}: ${options.text}`,
    text: options.text,
    author_name: options.authorName ?? 'bob',
    author_link: `https://butler-test.slack.com/team/${options.authorId ?? 'U0BOB'}`,
    author_icon: 'https://avatars.slack-edge.com/2023-07-22/bob_48.png',
    author_subname: options.authorName ?? 'bob',
    mrkdwn_in: ['text'],
    footer: `Posted in #${options.channelName ?? 'incidents'}`,
  };
}

/** A legacy bot attachment with a table of fields (docs.slack.dev reference/messaging/attachments). */
export function fieldsAttachment() {
  return {
    id: 1,
    color: '36a64f',
    fallback: 'Deploy 42 of payments finished: 3 of 4 checks passed',
    pretext: 'Deploy finished',
    author_name: 'Deploy Bot',
    title: '<https://ci.example.com/deploys/42|Deploy 42>',
    text: 'payments rolled out to *production*',
    fields: [
      { title: 'Service', value: 'payments', short: true },
      { title: 'Checks', value: '3 of 4 passed', short: true },
    ],
    footer: 'ci.example.com',
    ts: 1700000000,
    mrkdwn_in: ['text'],
  };
}

/** Slackbot's notice in the bot's DM (hackage slack-web golden `slackbotIm.json`). */
export function slackbotNotice(options: { ts: string; channel?: string; text?: string }) {
  const text = options.text ?? 'You have been removed from #deploys by <@U0ALICE>';
  return {
    type: 'message',
    text,
    user: 'USLACKBOT',
    ts: options.ts,
    team,
    blocks: richText(text),
    channel: options.channel ?? 'D0ALICE',
    event_ts: options.ts,
    channel_type: 'im',
  };
}
