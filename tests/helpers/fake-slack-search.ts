/**
 * Slack's real-time search for agent apps, for the fake Slack (fake-slack-api.ts), written from Slack's
 * documentation (docs.slack.dev/reference/methods/assistant.search.context, "Real-time search API";
 * docs.slack.dev/reference/methods/conversations.info) and the answer shape of @slack/web-api's
 * AssistantSearchContextResponse, not from Butler's code:
 * - assistant.search.context: a bot token (`xoxb-…`, else `not_allowed_token_type`) and the `action_token` of
 *   the event that asked (missing, unknown or expired: `missing_action_token`, `invalid_action_token`,
 *   `expired_action_token`). It searches as that token's user: public channels, and the private channels, DMs
 *   and group DMs they are in. `query` (required: every word must be in the text, any case), `channel_types`
 *   (comma-separated public_channel|private_channel|mpim|im, default public_channel), `content_types`
 *   (messages|files|channels|users, only messages are answered), `limit` 1..20 (default 20, else
 *   `invalid_limit`), `after`/`before` in unix seconds; `cursor` is ignored (one page). Newest first.
 * - conversations.info: what the bot may see of a conversation; one it is not in (unless public) is
 *   `channel_not_found`, as Slack answers.
 * Tests add conversations and messages, issue action tokens, and can make the next search fail (also with HTTP
 * 429 and `Retry-After`).
 */

import { randomUUID } from 'node:crypto';

type Answer = Record<string, unknown>;

export type FakeConversationKind = 'public' | 'private' | 'im' | 'mpim';

export interface FakeSearchConversation {
  id: string;
  name: string;
  kind: FakeConversationKind;
  /** Users who may read it (private channels, DMs and group DMs); public channels are readable by all. */
  members: string[];
  /** Whether the bot is in it (default: true for public channels, false otherwise). */
  botMember?: boolean;
  /** Shared with another organisation (Slack Connect). */
  externalShared?: boolean;
}

export interface FakeSearchMessage {
  channel: string;
  ts: string;
  user: string;
  /** The author's name as search shows it (default: the user id). */
  userName?: string;
  text: string;
  /** The author's workspace (default: the fake's team). */
  team?: string;
}

export interface FakeSearchRequest {
  args: Record<string, unknown>;
  token: string | undefined;
}

export interface FakeSlackSearch {
  addConversation(conversation: FakeSearchConversation): void;
  /** A message someone posted; its conversation must have been added. */
  addMessage(message: FakeSearchMessage): void;
  /** A fresh action token for `userId` (what an event carries), valid for `ttlMs` (default 10 minutes). */
  issueToken(userId: string, options?: { ttlMs?: number }): string;
  /** The token is now expired (`expired_action_token`). */
  expireToken(token: string): void;
  /** Every assistant.search.context call, in order (failed ones too). */
  requests: FakeSearchRequest[];
  /** The channel ids conversations.info was asked about, in order. */
  infoRequests: string[];
  /** Answer every readable result whatever `channel_types` says (Slack may do that). */
  ignoreChannelTypes: boolean;
  /** The next search fails with `error`; with `retryAfterSeconds` over HTTP 429 and `Retry-After`. */
  failNext(error: string, retryAfterSeconds?: number): void;
}

export interface FakeSlackSearchRoom {
  search: FakeSlackSearch;
  methods: Record<string, (args: Record<string, unknown>, token: string | undefined) => Answer>;
  reset(): void;
}

/** Marks an answer the fake server must send as HTTP 429 with `Retry-After` (a symbol: never serialised). */
const retryAfterMark = Symbol('retry-after');

/** The `Retry-After` seconds when a room's answer is to go out as HTTP 429, else undefined. */
export function answerRetryAfter(answer: Answer): number | undefined {
  const seconds = (answer as { [retryAfterMark]?: unknown })[retryAfterMark];
  return typeof seconds === 'number' ? seconds : undefined;
}

const channelTypeOf: Record<FakeConversationKind, string> = {
  public: 'public_channel',
  private: 'private_channel',
  im: 'im',
  mpim: 'mpim',
};
const channelTypes: readonly string[] = Object.values(channelTypeOf);
const contentTypes: readonly string[] = ['messages', 'files', 'channels', 'users'];
const defaultTtlMs = 10 * 60_000;

const fail = (error: string): Answer => ({ ok: false, error });

/** A ts as microseconds, exactly (a double loses the last digits). */
const micros = (ts: string): bigint => {
  const [seconds = '0', fraction = ''] = ts.split('.');
  return BigInt(seconds) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
};

/** A comma-separated list (or an array, in a JSON body) of allowed values; undefined when one is not allowed. */
function list(value: unknown, allowed: readonly string[], fallback: string): string[] | undefined {
  const raw = value === undefined || value === '' ? fallback : value;
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (!items) return undefined;
  const names = items.map((item) => String(item).trim());
  return names.every((name) => allowed.includes(name)) ? names : undefined;
}

/** An integer from a number or a string; undefined when absent, NaN when not an integer. */
function integer(value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isInteger(number) ? number : Number.NaN;
}

export function createFakeSlackSearch(options: { teamId?: string } = {}): FakeSlackSearchRoom {
  const teamId = options.teamId ?? 'T0BUTLER';
  const conversations = new Map<string, FakeSearchConversation>();
  const messages: FakeSearchMessage[] = [];
  const tokens = new Map<string, { userId: string; expiresAt: number }>();
  let pending: { error: string; retryAfterSeconds: number | undefined } | undefined;

  const search: FakeSlackSearch = {
    requests: [],
    infoRequests: [],
    ignoreChannelTypes: false,
    addConversation(conversation) {
      conversations.set(conversation.id, { ...conversation, members: [...conversation.members] });
    },
    addMessage(message) {
      if (!conversations.has(message.channel))
        throw new Error(`fake Slack search: add conversation ${message.channel} first`);
      if (!/^\d+\.\d+$/.test(message.ts)) throw new Error(`fake Slack search: bad ts ${message.ts}`);
      messages.push({ ...message });
    },
    issueToken(userId, tokenOptions = {}) {
      const token = `at-${randomUUID().replaceAll('-', '')}`;
      tokens.set(token, { userId, expiresAt: Date.now() + (tokenOptions.ttlMs ?? defaultTtlMs) });
      return token;
    },
    expireToken(token) {
      const issued = tokens.get(token);
      if (issued) issued.expiresAt = 0;
    },
    failNext(error, retryAfterSeconds) {
      pending = { error, retryAfterSeconds };
    },
  };

  const botMember = (conversation: FakeSearchConversation) =>
    conversation.botMember ?? conversation.kind === 'public';

  function searchContext(args: Record<string, unknown>, token: string | undefined): Answer {
    search.requests.push({ args, token });
    if (pending) {
      const { error, retryAfterSeconds } = pending;
      pending = undefined;
      return retryAfterSeconds === undefined
        ? fail(error)
        : { ...fail(error), [retryAfterMark]: retryAfterSeconds };
    }
    if (!token?.startsWith('xoxb-')) return fail('not_allowed_token_type');
    const actionToken = args.action_token;
    if (typeof actionToken !== 'string' || actionToken === '') return fail('missing_action_token');
    const issued = tokens.get(actionToken);
    if (!issued) return fail('invalid_action_token');
    if (issued.expiresAt <= Date.now()) return fail('expired_action_token');
    const query = typeof args.query === 'string' ? args.query.trim() : '';
    if (query === '') return fail('invalid_arguments');
    const limit = integer(args.limit) ?? 20;
    if (Number.isNaN(limit) || limit < 1 || limit > 20) return fail('invalid_limit');
    const after = integer(args.after);
    const before = integer(args.before);
    if (Number.isNaN(after) || Number.isNaN(before)) return fail('invalid_arguments');
    const wantedChannels = list(args.channel_types, channelTypes, 'public_channel');
    const wantedContent = list(args.content_types, contentTypes, 'messages');
    if (!wantedChannels || !wantedContent) return fail('invalid_arguments');

    const words = query.toLowerCase().split(/\s+/);
    const found = messages
      .map((message) => ({ message, conversation: conversations.get(message.channel) }))
      .filter(({ message, conversation }) => {
        if (!conversation) return false;
        if (conversation.kind !== 'public' && !conversation.members.includes(issued.userId)) return false;
        if (!search.ignoreChannelTypes && !wantedChannels.includes(channelTypeOf[conversation.kind]))
          return false;
        const at = micros(message.ts);
        if (after !== undefined && at <= BigInt(after) * 1_000_000n) return false;
        if (before !== undefined && at >= BigInt(before) * 1_000_000n) return false;
        const text = message.text.toLowerCase();
        return words.every((word) => text.includes(word));
      })
      .sort((left, right) => {
        const [a, b] = [micros(left.message.ts), micros(right.message.ts)];
        return a === b ? 0 : a < b ? 1 : -1;
      })
      .slice(0, wantedContent.includes('messages') ? limit : 0);
    return {
      ok: true,
      results: {
        messages: found.map(({ message, conversation }) => ({
          author_user_id: message.user,
          author_name: message.userName ?? message.user,
          team_id: message.team ?? teamId,
          channel_id: message.channel,
          channel_name: conversation?.name ?? '',
          message_ts: message.ts,
          content: message.text,
          is_author_bot: false,
          permalink: `https://fake.slack.com/archives/${message.channel}/p${message.ts.replace('.', '')}`,
        })),
      },
      response_metadata: { next_cursor: '' },
    };
  }

  function conversationInfo(args: Record<string, unknown>): Answer {
    const id = typeof args.channel === 'string' ? args.channel : '';
    search.infoRequests.push(id);
    const conversation = conversations.get(id);
    if (!conversation) return fail('channel_not_found');
    const member = botMember(conversation);
    if (conversation.kind !== 'public' && !member) return fail('channel_not_found');
    const shared = conversation.externalShared ?? false;
    return {
      ok: true,
      channel: {
        id,
        name: conversation.name,
        is_channel: conversation.kind === 'public' || conversation.kind === 'private',
        is_group: conversation.kind === 'private',
        is_im: conversation.kind === 'im',
        is_mpim: conversation.kind === 'mpim',
        is_private: conversation.kind !== 'public',
        is_ext_shared: shared,
        is_shared: shared,
        is_member: member,
      },
    };
  }

  return {
    search,
    methods: {
      'assistant.search.context': searchContext,
      'conversations.info': conversationInfo,
    },
    reset() {
      conversations.clear();
      messages.length = 0;
      tokens.clear();
      pending = undefined;
      search.requests.length = 0;
      search.infoRequests.length = 0;
      search.ignoreChannelTypes = false;
    },
  };
}
