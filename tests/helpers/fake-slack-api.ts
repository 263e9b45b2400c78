import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createFakeSlackAgents, type FakeSlackAgents } from './fake-slack-agents.js';
import { contextActionsViolations } from './fake-slack-context-actions.js';
import { createFakeSlackFiles, type FakeSlackFiles } from './fake-slack-files.js';
import { createFakeSlackHome, type FakeSlackHome } from './fake-slack-home.js';
import { createFakeSlackOAuth, type FakeSlackOAuth } from './fake-slack-oauth.js';
import { FakeRateTiers } from './fake-slack-rate-tiers.js';
import { answerRetryAfter, createFakeSlackSearch, type FakeSlackSearch } from './fake-slack-search.js';

/**
 * A local stand-in for Slack's Web API (plain node:http). Point SLACK_API_URL (or the adapter's
 * apiUrl) at `url`. It records every call with its parsed arguments (the official client posts
 * form-encoded bodies with JSON-encoded nested fields; JSON bodies work too), keeps the messages
 * it was asked to post, and fails on demand.
 */

export interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  /** The bearer token the call carried. */
  token: string | undefined;
  at: number;
}

export type Failure =
  | { error: string }
  | { rateLimitedSeconds: number }
  | { status: number }
  | { delayMs: number }
  | { hang: true };

export interface FakeMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  user: string | undefined;
  botId: string | undefined;
  text: string;
  blocks: unknown[] | undefined;
  /** Markdown received through chat.startStream/appendStream/stopStream. */
  markdown: string;
  streaming: boolean;
  deleted: boolean;
  reactions: Set<string>;
  subtype?: string;
  /** As Slack lists them: files shared with the message, and attachments (forwards, unfurls). */
  files?: unknown[];
  attachments?: unknown[];
}

export interface FakeSlackUser {
  name: string;
  displayName?: string;
  realName?: string;
  tz?: string;
}

export interface FakeSlackIdentity {
  teamId: string;
  userId: string;
  botId: string;
}

export interface FakeSlackApi {
  url: string;
  identity: FakeSlackIdentity;
  calls: RecordedCall[];
  messages: Map<string, FakeMessage>;
  /** People users.info knows; `tz` is their profile's time zone (Slack sends `America/Los_Angeles` and the like). */
  users: Map<string, FakeSlackUser>;
  /** Direct-message channels conversations.open opened, by user id (`D…`). */
  directChannels: Map<string, string>;
  /** Whether chat.startStream works; when false it answers `streamingError`. */
  streaming: boolean;
  streamingError: string;
  /** Whether assistant.threads.setStatus works (an app with the assistant feature, in a DM). */
  assistantThreads: boolean;
  /** Enforce Slack's rate tiers (fake-slack-rate-tiers.ts); off by default so other tests run at full speed. */
  rateTiers: boolean;
  /** Calls answered 429 because of the tiers (not `failNext`), in order. */
  rateLimited: RecordedCall[];
  /** Shared files and uploads (fake-slack-files.ts), served only to `botToken`. */
  files: FakeSlackFiles;
  /** Agent sessions and suggested prompts (fake-slack-agents.ts); off unless a test turns them on. */
  agents: FakeSlackAgents;
  /** App Home tabs published with views.publish (fake-slack-home.ts). */
  home: FakeSlackHome;
  /** Installs over OAuth (fake-slack-oauth.ts): codes to issue, each workspace's own bot token. */
  oauth: FakeSlackOAuth;
  /** Real-time search (assistant.search.context) and conversations.info (fake-slack-search.ts). */
  search: FakeSlackSearch;
  botToken: string;
  callsTo(method: string): RecordedCall[];
  /** The next `times` calls to `method` fail this way. */
  failNext(method: string, failure: Failure, times?: number): void;
  /** Runs `hook` once, right after the next call to `method` was answered (e.g. to kill Butler then). */
  afterNext(method: string, hook: (call: RecordedCall) => void): void;
  /** Slack ends a stream on its own (time limit): appends then fail with message_not_in_streaming_state. */
  endStream(ts: string): void;
  /** A message someone else posted (thread history for conversations.replies). */
  seedMessage(message: Partial<FakeMessage> & { channel: string; ts: string; text: string }): void;
  /** Live (not deleted) messages of a channel/thread, oldest first. */
  threadMessages(channel: string, threadTs: string | undefined): FakeMessage[];
  waitFor<T>(probe: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  reset(): void;
  close(): Promise<void>;
  server: Server;
}

const jsonFields = new Set([
  'blocks',
  'chunks',
  'view',
  'metadata',
  'attachments',
  'loading_messages',
  'prompts',
  'files',
]);
const markdownLimit = 12_000;

/** What a message shows: its markdown block, else its streamed Markdown, else its text. */
export function shownText(message: FakeMessage): string {
  const block = message.blocks?.find((candidate) => (candidate as { type?: unknown }).type === 'markdown') as
    | { text?: string }
    | undefined;
  if (block?.text !== undefined) return block.text;
  return message.markdown || message.text;
}

function parseArgs(raw: string, contentType: string | undefined): Record<string, unknown> {
  if ((contentType ?? '').includes('application/json')) {
    const value: unknown = raw ? JSON.parse(raw) : {};
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  }
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    args[key] = jsonFields.has(key) ? JSON.parse(value) : value;
  }
  return args;
}

function str(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The Block Kit limits Slack enforces with `invalid_blocks` (a subset: the ones Butler could hit). A message
 * holds 50 blocks, a modal 100 (docs.slack.dev "Blocks", "Modal views").
 */
export function blockKitViolations(blocks: unknown, maxBlocks = 50): string[] {
  const problems: string[] = [];
  if (!Array.isArray(blocks)) return problems;
  if (blocks.length > maxBlocks) problems.push(`more than ${maxBlocks} blocks`);
  let markdownTotal = 0;
  const textOf = (value: unknown) => (value as { text?: unknown } | undefined)?.text;
  for (const block of blocks as Array<Record<string, unknown>>) {
    if (block.type === 'markdown') markdownTotal += String(block.text ?? '').length;
    if (block.type === 'context_actions') problems.push(...contextActionsViolations(block));
    if (block.type === 'section') {
      const text = textOf(block.text);
      if (typeof text === 'string' && text.length > 3000) problems.push('section text over 3000');
      const fields = Array.isArray(block.fields) ? block.fields : [];
      if (fields.length > 10) problems.push('more than 10 fields');
      for (const field of fields) if (String(textOf(field)).length > 2000) problems.push('field over 2000');
    }
    if (block.type === 'actions') {
      const elements = Array.isArray(block.elements)
        ? (block.elements as Array<Record<string, unknown>>)
        : [];
      if (elements.length > 25) problems.push('more than 25 elements');
      for (const element of elements) {
        if (String(textOf(element.text)).length > 75) problems.push('button text over 75');
        if (String(element.value ?? '').length > 2000) problems.push('button value over 2000');
        if (String(element.action_id ?? '').length > 255) problems.push('action_id over 255');
        const confirm = element.confirm as Record<string, unknown> | undefined;
        if (confirm) {
          if (String(textOf(confirm.title)).length > 100) problems.push('confirm title over 100');
          if (String(textOf(confirm.text)).length > 300) problems.push('confirm text over 300');
        }
      }
    }
  }
  if (markdownTotal > markdownLimit) problems.push('markdown blocks over 12000');
  return problems;
}

export async function startFakeSlackApi(
  options: {
    identity?: Partial<FakeSlackIdentity>;
    socketUrl?: () => string;
    /** The bot token Slack's file host serves files to. */
    botToken?: string;
  } = {},
): Promise<FakeSlackApi> {
  const identity: FakeSlackIdentity = {
    teamId: 'T0BUTLER',
    userId: 'U0BUTLER',
    botId: 'B0BUTLER',
    ...options.identity,
  };
  const failures = new Map<string, Failure[]>();
  const afterHooks = new Map<string, (call: RecordedCall) => void>();
  const endedStreams = new Set<string>();
  let counter = 0;
  // Slack's ts is its clock in microseconds, unique per channel; a reply is always newer than its thread.
  let lastMicros = 0;
  const nextTs = (after?: string) => {
    const afterMicros = after ? Math.round(Number(after) * 1_000_000) : 0;
    lastMicros = Math.max(Date.now() * 1000, lastMicros + 1, afterMicros + 1);
    counter += 1;
    return `${Math.floor(lastMicros / 1_000_000)}.${String(lastMicros % 1_000_000).padStart(6, '0')}`;
  };

  const fake = {
    url: '',
    identity,
    calls: [] as RecordedCall[],
    messages: new Map<string, FakeMessage>(),
    users: new Map<string, FakeSlackUser>(),
    directChannels: new Map<string, string>(),
    streaming: true,
    streamingError: 'method_not_supported_for_channel_type',
    assistantThreads: true,
    rateTiers: false,
    rateLimited: [] as RecordedCall[],
    botToken: options.botToken ?? 'xoxb-test',
  } as FakeSlackApi;
  const rateTiers = new FakeRateTiers();
  const fileRoom = createFakeSlackFiles({
    baseUrl: () => fake.url.replace(/api\/$/, ''),
    botToken: fake.botToken,
    teamId: identity.teamId,
    share(channel, threadTs, file) {
      const ts = nextTs(threadTs);
      const message = newMessage(channel, ts, { thread_ts: threadTs });
      fake.messages.set(`${channel}:${ts}`, { ...message, subtype: 'file_share', files: [file] });
    },
  });
  fake.files = fileRoom.files;
  const agentRoom = createFakeSlackAgents();
  fake.agents = agentRoom.agents;
  const homeRoom = createFakeSlackHome({ violations: blockKitViolations });
  fake.home = homeRoom.home;
  const oauthRoom = createFakeSlackOAuth();
  fake.oauth = oauthRoom.oauth;
  const searchRoom = createFakeSlackSearch({ teamId: identity.teamId });
  fake.search = searchRoom.search;

  const newMessage = (channel: string, ts: string, args: Record<string, unknown>): FakeMessage => ({
    channel,
    ts,
    threadTs: str(args, 'thread_ts'),
    user: identity.userId,
    botId: identity.botId,
    text: str(args, 'text') ?? '',
    blocks: Array.isArray(args.blocks) ? args.blocks : undefined,
    markdown: str(args, 'markdown_text') ?? '',
    streaming: false,
    deleted: false,
    reactions: new Set(),
  });

  type Answer = Record<string, unknown>;
  const fail = (error: string): Answer => ({ ok: false, error });

  function findMessage(args: Record<string, unknown>, tsKey = 'ts'): FakeMessage | undefined {
    const message = fake.messages.get(`${str(args, 'channel')}:${str(args, tsKey)}`);
    return message && !message.deleted ? message : undefined;
  }

  function appendMarkdown(message: FakeMessage, text: string | undefined): Answer | undefined {
    if (!text) return undefined;
    if (message.markdown.length + text.length > markdownLimit) return fail('msg_too_long');
    message.markdown += text;
    return undefined;
  }

  /** One page of messages between `oldest` and `latest` (exclusive unless `inclusive`), as Slack lists them. */
  function listing(all: FakeMessage[], args: Record<string, unknown>): Answer {
    const latest = str(args, 'latest');
    const oldest = str(args, 'oldest');
    const inclusive = args.inclusive === true || args.inclusive === 'true';
    const within = (ts: string, bound: string, before: boolean) => {
      const [value, limit] = [Number(ts), Number(bound)];
      if (value === limit) return inclusive;
      return before ? value < limit : value > limit;
    };
    const selected = all.filter(
      (message) =>
        (!latest || within(message.ts, latest, true)) && (!oldest || within(message.ts, oldest, false)),
    );
    const limit = Number(args.limit ?? 100);
    const start = Number(str(args, 'cursor') ?? 0);
    const page = selected.slice(start, start + limit);
    const next = start + limit < selected.length ? String(start + limit) : '';
    return {
      ok: true,
      messages: page.map((message) => ({
        type: 'message',
        ts: message.ts,
        thread_ts: message.threadTs ?? message.ts,
        ...(message.user ? { user: message.user } : {}),
        ...(message.botId ? { bot_id: message.botId } : {}),
        ...(message.subtype ? { subtype: message.subtype } : {}),
        ...(message.blocks ? { blocks: message.blocks } : {}),
        ...(message.files ? { files: message.files } : {}),
        ...(message.attachments ? { attachments: message.attachments } : {}),
        text: message.text || message.markdown,
      })),
      has_more: next !== '',
      response_metadata: { next_cursor: next },
    };
  }

  const methods: Record<string, (args: Record<string, unknown>, token: string | undefined) => Answer> = {
    'auth.test': (_args, token) =>
      oauthRoom.authTest(token) ?? {
        ok: true,
        url: 'https://butler-test.slack.com/',
        team: 'Butler Test',
        user: 'butler',
        team_id: identity.teamId,
        user_id: identity.userId,
        bot_id: identity.botId,
        is_enterprise_install: false,
      },
    'oauth.v2.access': (args) => oauthRoom.access(args, undefined),
    'auth.revoke': (_args, token) => oauthRoom.revoke(token),
    'apps.connections.open': () =>
      options.socketUrl ? { ok: true, url: options.socketUrl() } : fail('invalid_auth'),
    'chat.postMessage': (args) => {
      const channel = str(args, 'channel');
      if (!channel) return fail('channel_not_found');
      if (!str(args, 'text') && !args.blocks && !str(args, 'markdown_text')) return fail('no_text');
      if (blockKitViolations(args.blocks).length > 0) return fail('invalid_blocks');
      const ts = nextTs(str(args, 'thread_ts'));
      fake.messages.set(`${channel}:${ts}`, newMessage(channel, ts, args));
      return {
        ok: true,
        channel,
        ts,
        message: { type: 'message', text: args.text ?? '', ts, bot_id: identity.botId },
      };
    },
    'chat.update': (args) => {
      const message = findMessage(args);
      if (!message) return fail('message_not_found');
      if (blockKitViolations(args.blocks).length > 0) return fail('invalid_blocks');
      message.text = str(args, 'text') ?? message.text;
      message.blocks = Array.isArray(args.blocks) ? args.blocks : undefined;
      message.markdown = '';
      return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
    },
    'chat.delete': (args) => {
      const message = findMessage(args);
      if (!message) return fail('message_not_found');
      message.deleted = true;
      return { ok: true, channel: message.channel, ts: message.ts };
    },
    'chat.postEphemeral': (args) => {
      if (!str(args, 'channel') || !str(args, 'user')) return fail('invalid_arguments');
      return { ok: true, message_ts: nextTs() };
    },
    'chat.startStream': (args) => {
      const channel = str(args, 'channel');
      if (!channel) return fail('channel_not_found');
      if (!fake.streaming) return fail(fake.streamingError);
      // "Streamed messages should always be replies to a user request" (platforms.md "Checked since").
      if (!str(args, 'thread_ts')) return fail('invalid_arguments');
      if (!channel.startsWith('D')) {
        if (!str(args, 'recipient_user_id')) return fail('missing_recipient_user_id');
        if (!str(args, 'recipient_team_id')) return fail('missing_recipient_team_id');
      }
      if ((str(args, 'markdown_text') ?? '').length > markdownLimit) return fail('msg_too_long');
      const ts = nextTs(str(args, 'thread_ts'));
      const message = newMessage(channel, ts, args);
      message.streaming = true;
      fake.messages.set(`${channel}:${ts}`, message);
      return { ok: true, channel, ts };
    },
    'chat.appendStream': (args) => {
      const message = findMessage(args);
      if (!message) return fail('message_not_found');
      if (!message.streaming || endedStreams.has(message.ts)) return fail('message_not_in_streaming_state');
      return (
        appendMarkdown(message, str(args, 'markdown_text')) ?? {
          ok: true,
          channel: message.channel,
          ts: message.ts,
        }
      );
    },
    'chat.stopStream': (args) => {
      const message = findMessage(args);
      if (!message) return fail('message_not_found');
      if (!message.streaming || endedStreams.has(message.ts)) return fail('message_not_in_streaming_state');
      // Blocks are appended below the streamed text (the method's `blocks`).
      if (blockKitViolations(args.blocks).length > 0) return fail('invalid_blocks');
      const refused = agentRoom.streamStopped(message.channel, message.threadTs, args);
      if (refused) return refused;
      const problem = appendMarkdown(message, str(args, 'markdown_text'));
      if (problem) return problem;
      if (Array.isArray(args.blocks)) message.blocks = args.blocks;
      message.streaming = false;
      return { ok: true, channel: message.channel, ts: message.ts };
    },
    'reactions.add': (args) => {
      const message = findMessage(args, 'timestamp');
      if (!message) return fail('message_not_found');
      const name = str(args, 'name') ?? '';
      if (message.reactions.has(name)) return fail('already_reacted');
      message.reactions.add(name);
      return { ok: true };
    },
    'reactions.remove': (args) => {
      const message = findMessage(args, 'timestamp');
      if (!message) return fail('message_not_found');
      if (!message.reactions.delete(str(args, 'name') ?? '')) return fail('no_reaction');
      return { ok: true };
    },
    'assistant.threads.setStatus': (args) => {
      if (!fake.assistantThreads) return fail('not_allowed');
      if (!str(args, 'channel_id') || !str(args, 'thread_ts')) return fail('invalid_arguments');
      return { ok: true };
    },
    'users.info': (args) => {
      const id = str(args, 'user') ?? '';
      const user = fake.users.get(id);
      if (!user) return fail('user_not_found');
      return {
        ok: true,
        user: {
          id,
          name: user.name,
          real_name: user.realName ?? user.name,
          profile: { display_name: user.displayName ?? '', real_name: user.realName ?? user.name },
          ...(user.tz ? { tz: user.tz, tz_label: user.tz, tz_offset: 0 } : {}),
        },
      };
    },
    // One user opens (or resumes) their 1:1 DM, the same channel each time; group DMs are not faked.
    'conversations.open': (args) => {
      const users = str(args, 'users');
      if (!users) return fail('users_list_not_supplied');
      if (!fake.users.has(users)) return fail('user_not_found');
      const open = fake.directChannels.get(users);
      const channel = open ?? `D${users.slice(1)}`;
      fake.directChannels.set(users, channel);
      return { ok: true, ...(open ? { no_op: true, already_open: true } : {}), channel: { id: channel } };
    },
    'conversations.replies': (args) => {
      const channel = str(args, 'channel') ?? '';
      const threadTs = str(args, 'ts') ?? '';
      const all = fake.threadMessages(channel, threadTs);
      if (all.length === 0) return fail('thread_not_found');
      return listing(all, args);
    },
    // Slack lists a channel's history newest first (thread replies oldest first).
    'conversations.history': (args) =>
      listing(fake.threadMessages(str(args, 'channel') ?? '', undefined).reverse(), args),
    'views.open': (args) => {
      if (!str(args, 'trigger_id')) return fail('invalid_trigger_id');
      const view = (args.view ?? {}) as { title?: { text?: unknown }; blocks?: unknown };
      const title = view.title?.text;
      if (typeof title !== 'string' || title.length > 24) return fail('invalid_arguments');
      if (blockKitViolations(view.blocks, 100).length > 0) return fail('invalid_arguments');
      return { ok: true, view: { id: `V${++counter}` } };
    },
    ...fileRoom.methods,
    ...agentRoom.methods,
    ...homeRoom.methods,
    ...searchRoom.methods,
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (await fileRoom.serve(request, response)) return;
    const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0] ?? '';
    let raw = '';
    for await (const chunk of request) raw += String(chunk);
    const args = parseArgs(raw, request.headers['content-type']);
    const authorization = request.headers.authorization;
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : str(args, 'token');
    const call = { method, args, token, at: Date.now() };
    fake.calls.push(call);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      const hook = afterHooks.get(method);
      afterHooks.delete(method);
      response.end(JSON.stringify(body), () => hook?.(call));
    };
    const queued = failures.get(method);
    const failure = queued?.shift();
    if (failure) {
      if ('hang' in failure) return;
      if ('rateLimitedSeconds' in failure) {
        return send(
          429,
          { ok: false, error: 'ratelimited' },
          { 'retry-after': String(failure.rateLimitedSeconds) },
        );
      }
      if ('status' in failure) return send(failure.status, { ok: false, error: 'internal_error' });
      if ('error' in failure) return send(200, fail(failure.error));
      await delay(failure.delayMs);
    }
    const retryAfter = fake.rateTiers ? rateTiers.admit(method, token, args, call.at) : undefined;
    if (retryAfter !== undefined) {
      fake.rateLimited.push(call);
      return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(retryAfter) });
    }
    const implementation = methods[method];
    if (!implementation) return send(200, fail('unknown_method'));
    const answer = implementation(args, token);
    // A room may ask for HTTP 429 (fake-slack-search.ts failNext with Retry-After).
    const answerRetry = answerRetryAfter(answer);
    if (answerRetry === undefined) return send(200, answer);
    send(429, answer, { 'retry-after': String(answerRetry) });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/api/`,
    server,
    callsTo: (method: string) => fake.calls.filter((call) => call.method === method),
    failNext(method: string, failure: Failure, times = 1) {
      const queue = failures.get(method) ?? [];
      for (let index = 0; index < times; index++) queue.push(failure);
      failures.set(method, queue);
    },
    afterNext(method: string, hook: (call: RecordedCall) => void) {
      afterHooks.set(method, hook);
    },
    endStream(ts: string) {
      endedStreams.add(ts);
    },
    seedMessage(message: Partial<FakeMessage> & { channel: string; ts: string; text: string }) {
      fake.messages.set(`${message.channel}:${message.ts}`, {
        threadTs: undefined,
        user: undefined,
        botId: undefined,
        blocks: undefined,
        markdown: '',
        streaming: false,
        deleted: false,
        reactions: new Set<string>(),
        ...message,
      });
    },
    threadMessages(channel: string, threadTs: string | undefined) {
      return [...fake.messages.values()]
        .filter((message) => message.channel === channel && !message.deleted)
        .filter((message) =>
          threadTs === undefined
            ? message.threadTs === undefined
            : message.ts === threadTs || message.threadTs === threadTs,
        )
        .sort((left, right) => Number(left.ts) - Number(right.ts));
    },
    // Generous: a turn on a busy machine (two test passes on two cores) takes seconds; a failure still fails.
    async waitFor<T>(probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = probe();
        if (value !== undefined && value !== false) return value;
        if (Date.now() > deadline) throw new Error('fake Slack API: condition not met in time');
        await delay(10);
      }
    },
    reset() {
      fake.calls.length = 0;
      fake.messages.clear();
      fake.directChannels.clear();
      failures.clear();
      afterHooks.clear();
      endedStreams.clear();
      fake.streaming = true;
      fake.assistantThreads = true;
      fake.rateTiers = false;
      fake.rateLimited.length = 0;
      rateTiers.reset();
      fileRoom.reset();
      agentRoom.reset();
      homeRoom.reset();
      searchRoom.reset();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
