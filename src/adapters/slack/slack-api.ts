import { WebClient } from '@slack/web-api';
import { ButlerError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import { isTimeZone } from '../../core/schedules/index.js';
import { clientFetch } from '../../http/client-fetch.js';
import { type CallObserver, Pacer, type RetryPolicy, type Share } from '../pacing/index.js';
import { downloadSlackFile, fileHosts, postUpload } from './file-access.js';
import type { BotIdentity } from './normalize.js';
import { isRecord } from './parse.js';
import { type SharedSlackMethod, slackLane } from './rate-tiers.js';
import { toSlackSdkLogger } from './slack-logger.js';

/**
 * The one place that calls Slack's Web API. Everything else talks to this narrow, typed interface,
 * so the SDK's loose types stop here and tests can drive the real client against a local fake. Every call
 * goes through the workspace's pacing (rate-tiers.ts), which also retries rate-limited calls.
 */

/** A failed Web API call; `slackError` is Slack's error string (`not_allowed`, `ratelimited`, …). */
export class SlackApiError extends ButlerError {
  readonly method: string;
  readonly slackError: string;

  constructor(method: string, slackError: string, options?: { cause?: unknown }) {
    super('slack_api_error', `Slack ${method} failed: ${slackError}`, options);
    this.method = method;
    this.slackError = slackError;
  }
}

export type SlackBlocks = readonly Record<string, unknown>[];

export interface SlackThreadMessage {
  ts: string;
  user: string | undefined;
  botId: string | undefined;
  text: string;
  subtype: string | undefined;
  /** Whether it carries buttons (an approval card still waiting for a decision). */
  hasActions: boolean;
  /** As Slack lists them (read by `messageContent`): the blocks, shared files and attachments. */
  blocks: readonly unknown[];
  files: readonly unknown[];
  attachments: readonly unknown[];
}

/** An agent session's lifecycle status (agents.sessions.setStatus). */
export type SessionStatus = 'processing' | 'active' | 'suspended' | 'closed';

export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** What users.info tells of a person: the name to show, and the IANA time zone of their profile. */
export interface SlackProfile {
  name: string | undefined;
  timezone: string | undefined;
}

export interface SlackApi {
  authTest(): Promise<BotIdentity>;
  postMessage(args: {
    channel: string;
    threadTs?: string;
    text: string;
    blocks?: SlackBlocks;
  }): Promise<string>;
  updateMessage(args: { channel: string; ts: string; text: string; blocks?: SlackBlocks }): Promise<void>;
  deleteMessage(args: { channel: string; ts: string }): Promise<void>;
  postEphemeral(args: { channel: string; user: string; text: string; threadTs?: string }): Promise<void>;
  /**
   * Starts a stream only when the workspace's chat.startStream budget has room now: undefined (nothing sent)
   * when it has none, so the caller can deliver another way instead of waiting.
   */
  startStream(args: {
    channel: string;
    threadTs: string;
    markdownText: string;
    recipientUserId?: string;
    recipientTeamId?: string;
  }): Promise<string | undefined>;
  appendStream(args: { channel: string; ts: string; markdownText: string }): Promise<void>;
  /** `blocks` are appended below the streamed text (the reply's feedback buttons). */
  stopStream(args: {
    channel: string;
    ts: string;
    markdownText?: string;
    blocks?: SlackBlocks;
  }): Promise<void>;
  addReaction(args: { channel: string; ts: string; name: string }): Promise<void>;
  removeReaction(args: { channel: string; ts: string; name: string }): Promise<void>;
  setAssistantStatus(args: { channel: string; threadTs: string; status: string }): Promise<void>;
  /** An agent session's status (creating the session): `title` and `initiatorUserId` count only then. */
  setSessionStatus(args: {
    channel: string;
    threadTs: string;
    status: SessionStatus;
    title?: string;
    initiatorUserId?: string;
  }): Promise<void>;
  /** The prompts an agent's container offers (at most 4); an agent app sets them per channel, not thread. */
  setSuggestedPrompts(args: {
    channel: string;
    prompts: readonly SuggestedPrompt[];
    title?: string;
  }): Promise<void>;
  userProfile(userId: string): Promise<SlackProfile>;
  /** The direct-message channel (`D…`) between Butler and `userId`, opened if needed (scope `im:write`). */
  openDirectChannel(userId: string): Promise<string>;
  threadReplies(args: {
    channel: string;
    ts: string;
    latest: string;
    cursor?: string;
  }): Promise<{ messages: SlackThreadMessage[]; nextCursor: string | undefined }>;
  openView(args: { triggerId: string; view: Record<string, unknown> }): Promise<void>;
  /** Publishes `view` (type `home`) as the App Home tab of `userId`. */
  publishView(args: { userId: string; view: Record<string, unknown> }): Promise<void>;
  /** Messages after `oldest` (exclusive): a thread's replies, or a channel's top level without `threadTs`. */
  messagesAfter(args: { channel: string; threadTs?: string; oldest: string }): Promise<SlackThreadMessage[]>;
  /**
   * A shared file's bytes from its `url_private…` URL: the bot token goes only to Slack's file host
   * (file-access.ts). Throws FileTooLargeError past `maxBytes`.
   */
  downloadFile(args: {
    url: string;
    maxBytes: number;
    htmlExpected: boolean;
    signal?: AbortSignal | undefined;
  }): Promise<{ bytes: Uint8Array; mediaType: string | undefined }>;
  /** Shares a file in the channel (in `threadTs` when given) by Slack's external upload; returns its id. */
  uploadFile(args: {
    channel: string;
    threadTs?: string;
    filename: string;
    title: string;
    bytes: Uint8Array;
  }): Promise<string>;
  /** A repeating caller's part of the workspace's budget for `method` (each live reply takes one). */
  share(method: SharedSlackMethod): Share;
}

export interface SlackApiOptions {
  token: string;
  apiUrl: string;
  logger: Logger;
  /** Per attempt. */
  timeoutMs?: number;
  /** Bounded: the client's default retries for about 30 minutes. 429s are retried after Retry-After. */
  retries?: number;
  minRetryDelayMs?: number;
  /** Milliseconds since the epoch, for the pacing windows. */
  now?: () => number;
  /** Pace to Slack's documented tiers (default); off only against a stand-in that does not enforce them. */
  rateTiers?: boolean;
  /** Hears each call's outcome by method (metrics). */
  onCall?: CallObserver | undefined;
}

export function slackClientOptions(options: Omit<SlackApiOptions, 'token'>) {
  return {
    slackApiUrl: options.apiUrl,
    timeout: options.timeoutMs ?? 10_000,
    retryConfig: {
      retries: options.retries ?? 2,
      factor: 1.5,
      minTimeout: options.minRetryDelayMs ?? 1000,
      randomize: false,
    },
    logger: toSlackSdkLogger(options.logger),
    fetch: clientFetch,
  };
}

/** The SDK's answer to a 429 when `rejectRateLimitedCalls` is on: Retry-After in seconds. */
function retryAfterMs(error: unknown): number | undefined {
  if (!isRecord(error) || error.code !== 'slack_webapi_rate_limited_error') return undefined;
  return typeof error.retryAfter === 'number' ? error.retryAfter * 1000 : undefined;
}

function toSlackApiError(method: string, error: unknown): SlackApiError {
  if (error instanceof SlackApiError) return error;
  const record = isRecord(error) ? error : {};
  const data = isRecord(record.data) ? record.data : {};
  let slackError = 'request_failed';
  if (record.code === 'slack_webapi_platform_error' && typeof data.error === 'string')
    slackError = data.error;
  else if (record.code === 'slack_webapi_rate_limited_error') slackError = 'ratelimited';
  else if (record.code === 'slack_webapi_http_error') slackError = `http_${String(record.statusCode)}`;
  else if (error instanceof Error && /rate limit/i.test(error.message)) slackError = 'ratelimited';
  return new SlackApiError(method, slackError, { cause: error });
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** conversations.replies / conversations.history entries → the fields Butler reads. */
function listedMessages(result: Record<string, unknown>): SlackThreadMessage[] {
  return (Array.isArray(result.messages) ? result.messages : []).filter(isRecord).flatMap((message) => {
    const ts = stringField(message, 'ts');
    if (!ts) return [];
    const list = (key: string): unknown[] => (Array.isArray(message[key]) ? message[key] : []);
    const blocks = list('blocks');
    return [
      {
        ts,
        user: stringField(message, 'user'),
        botId: stringField(message, 'bot_id'),
        text: typeof message.text === 'string' ? message.text : '',
        subtype: stringField(message, 'subtype'),
        hasActions: blocks.some((block) => isRecord(block) && block.type === 'actions'),
        blocks,
        files: list('files'),
        attachments: list('attachments'),
      },
    ];
  });
}

export function createSlackApi(options: SlackApiOptions): SlackApi {
  // On a 429 the client would pause its whole queue for the Retry-After (WebClient.ts, requestQueue.pause(),
  // platforms.md "Checked since"): it answers instead, and the pacing backs off that method alone.
  const client = new WebClient(options.token, {
    ...slackClientOptions(options),
    rejectRateLimitedCalls: true,
  });
  const pacer = new Pacer({ now: options.now, onCall: options.onCall });
  const rateLimits: RetryPolicy = { retries: options.retries ?? 2, retryAfterMs };
  // One token is one installation: its budgets are the workspace's (auth.test names it before any other call).
  let workspace = 'workspace';
  const hosts = fileHosts(options.apiUrl);
  const tiers = options.rateTiers ?? true;
  const laneOf = (method: string, args: Record<string, unknown>) => slackLane(workspace, method, args, tiers);

  const send = async (method: string, args: Record<string, unknown>) => {
    const result: unknown = await client.apiCall(method, args);
    return isRecord(result) ? result : {};
  };

  async function call(method: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return await pacer.run(method, [laneOf(method, args)], () => send(method, args), rateLimits);
    } catch (error) {
      throw toSlackApiError(method, error);
    }
  }

  async function callForTs(method: string, args: Record<string, unknown>): Promise<string> {
    return tsOf(method, await call(method, args));
  }

  function tsOf(method: string, result: Record<string, unknown>): string {
    const ts = stringField(result, 'ts');
    if (!ts) throw new SlackApiError(method, 'missing_ts');
    return ts;
  }

  return {
    async authTest() {
      const result = await call('auth.test', {});
      const userId = stringField(result, 'user_id');
      const teamId = stringField(result, 'team_id');
      if (!userId || !teamId) throw new SlackApiError('auth.test', 'missing_identity');
      workspace = teamId;
      return { userId, teamId, botId: stringField(result, 'bot_id') ?? '' };
    },
    postMessage: ({ channel, threadTs, text, blocks }) =>
      callForTs('chat.postMessage', { channel, thread_ts: threadTs, text, blocks, unfurl_links: false }),
    async updateMessage({ channel, ts, text, blocks }) {
      await call('chat.update', { channel, ts, text, blocks });
    },
    async deleteMessage({ channel, ts }) {
      await call('chat.delete', { channel, ts });
    },
    async postEphemeral({ channel, user, text, threadTs }) {
      await call('chat.postEphemeral', { channel, user, text, thread_ts: threadTs });
    },
    async startStream({ channel, threadTs, markdownText, recipientUserId, recipientTeamId }) {
      const method = 'chat.startStream';
      const args = {
        channel,
        thread_ts: threadTs,
        markdown_text: markdownText,
        recipient_user_id: recipientUserId,
        recipient_team_id: recipientTeamId,
      };
      try {
        const started = pacer.runIfFree(method, [laneOf(method, args)], () => send(method, args), rateLimits);
        return started && tsOf(method, await started);
      } catch (error) {
        throw toSlackApiError(method, error);
      }
    },
    async appendStream({ channel, ts, markdownText }) {
      await call('chat.appendStream', { channel, ts, markdown_text: markdownText });
    },
    async stopStream({ channel, ts, markdownText, blocks }) {
      await call('chat.stopStream', { channel, ts, markdown_text: markdownText, blocks });
    },
    async addReaction({ channel, ts, name }) {
      await call('reactions.add', { channel, timestamp: ts, name });
    },
    async removeReaction({ channel, ts, name }) {
      await call('reactions.remove', { channel, timestamp: ts, name });
    },
    async setAssistantStatus({ channel, threadTs, status }) {
      await call('assistant.threads.setStatus', { channel_id: channel, thread_ts: threadTs, status });
    },
    async setSessionStatus({ channel, threadTs, status, title, initiatorUserId }) {
      await call('agents.sessions.setStatus', {
        channel_id: channel,
        thread_ts: threadTs,
        status,
        title,
        initiator_user_id: initiatorUserId,
      });
    },
    // No thread_ts: Slack's method page says an agent app's call with one "will silently fail".
    async setSuggestedPrompts({ channel, prompts, title }) {
      await call('assistant.threads.setSuggestedPrompts', { channel_id: channel, prompts, title });
    },
    async userProfile(userId) {
      const result = await call('users.info', { user: userId });
      const user = isRecord(result.user) ? result.user : {};
      const profile = isRecord(user.profile) ? user.profile : {};
      const name =
        stringField(profile, 'display_name') ??
        stringField(profile, 'real_name') ??
        stringField(user, 'real_name') ??
        stringField(user, 'name');
      // `tz` is the zone the person set in Slack (users.info, "tz"); anything not IANA is left out.
      const tz = stringField(user, 'tz');
      return { name, timezone: tz && isTimeZone(tz) ? tz : undefined };
    },
    // conversations.open { users } opens or resumes the 1:1 DM (Tier 3, scope im:write; its method page).
    async openDirectChannel(userId) {
      const result = await call('conversations.open', { users: userId });
      const channel = isRecord(result.channel) ? stringField(result.channel, 'id') : undefined;
      if (!channel) throw new SlackApiError('conversations.open', 'missing_channel');
      return channel;
    },
    async threadReplies({ channel, ts, latest, cursor }) {
      const result = await call('conversations.replies', {
        channel,
        ts,
        latest,
        inclusive: false,
        limit: 200,
        cursor,
      });
      const metadata = isRecord(result.response_metadata) ? result.response_metadata : {};
      return { messages: listedMessages(result), nextCursor: stringField(metadata, 'next_cursor') };
    },
    async openView({ triggerId, view }) {
      await call('views.open', { trigger_id: triggerId, view });
    },
    async publishView({ userId, view }) {
      await call('views.publish', { user_id: userId, view });
    },
    async messagesAfter({ channel, threadTs, oldest }) {
      const window = { channel, oldest, inclusive: false, limit: 200 };
      const result = threadTs
        ? await call('conversations.replies', { ...window, ts: threadTs })
        : await call('conversations.history', window);
      return listedMessages(result);
    },
    downloadFile: ({ url, maxBytes, htmlExpected, signal }) =>
      downloadSlackFile(clientFetch, { url, token: options.token, hosts, maxBytes, htmlExpected, signal }),
    // files.getUploadURLExternal → POST the bytes → files.completeUploadExternal (platforms.md "Slack files").
    async uploadFile({ channel, threadTs, filename, title, bytes }) {
      const method = 'files.getUploadURLExternal';
      const upload = await call(method, { filename, length: bytes.byteLength });
      const url = stringField(upload, 'upload_url');
      const fileId = stringField(upload, 'file_id');
      if (!url || !fileId) throw new SlackApiError(method, 'missing_upload_url');
      await postUpload(clientFetch, { url, token: options.token, hosts, bytes, filename });
      await call('files.completeUploadExternal', {
        files: [{ id: fileId, title }],
        channel_id: channel,
        thread_ts: threadTs,
      });
      return fileId;
    },
    share: (method) => pacer.share(laneOf(method, {})),
  };
}

/** Log fields for a failure: Slack's error string, never the request (it may hold text or tokens). */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof SlackApiError) return { slackError: error.slackError, method: error.method };
  return { error: error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error' };
}
