import { WebClient } from '@slack/web-api';
import type { Logger } from '../../core/contracts/logger.js';
import { isTimeZone } from '../../core/schedules/index.js';
import { clientFetch } from '../../http/client-fetch.js';
import {
  type CallObserver,
  Pacer,
  type Priority,
  type Reservation,
  type RetryPolicy,
  type Share,
} from '../pacing/index.js';
import { type CosmeticBoard, type CosmeticOptions, cosmeticBoard } from './cosmetic-calls.js';
import { downloadSlackFile, fileHosts, postUpload } from './file-access.js';
import { listedMessages, type SlackThreadMessage, stringField } from './listed-messages.js';
import type { BotIdentity } from './normalize.js';
import { isRecord } from './parse.js';
import { type SharedSlackMethod, slackLane } from './rate-tiers.js';
import { SlackApiError, tokenRefusals, toSlackApiError } from './slack-api-error.js';
import { toSlackSdkLogger } from './slack-logger.js';

export type { SlackThreadMessage } from './listed-messages.js';

export { errorFields, SlackApiError } from './slack-api-error.js';

/**
 * The one place that calls Slack's Web API. Everything else talks to this narrow, typed interface,
 * so the SDK's loose types stop here and tests can drive the real client against a local fake. Every call
 * goes through the workspace's pacing (rate-tiers.ts), which also retries rate-limited calls.
 */

export type SlackBlocks = readonly Record<string, unknown>[];

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
  /** `priority` `routine` for what no one waits on right now (a reminder's copy); a reply's by default. */
  postMessage(args: {
    channel: string;
    threadTs?: string;
    text: string;
    blocks?: SlackBlocks;
    priority?: Priority;
  }): Promise<string>;
  updateMessage(args: {
    channel: string;
    ts: string;
    text: string;
    blocks?: SlackBlocks;
    priority?: Priority;
  }): Promise<void>;
  deleteMessage(args: { channel: string; ts: string }): Promise<void>;
  postEphemeral(args: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    blocks?: SlackBlocks;
  }): Promise<void>;
  /**
   * Starts a stream only when the workspace's chat.startStream budget has room now, and chat.stopStream's has
   * room for its stop (reserved until the stop is made, so a reply's end never waits for budget): undefined
   * (nothing sent) when either has none, so the caller can deliver another way instead of waiting.
   */
  startStream(args: {
    channel: string;
    threadTs: string;
    markdownText: string;
    recipientUserId?: string;
    recipientTeamId?: string;
  }): Promise<string | undefined>;
  appendStream(args: { channel: string; ts: string; markdownText: string }): Promise<void>;
  /**
   * `blocks` are appended below the streamed text (the reply's feedback buttons). `sessionStatus` is the agent
   * session's status after the stop (agent-sessions.ts).
   */
  stopStream(args: {
    channel: string;
    ts: string;
    markdownText?: string;
    blocks?: SlackBlocks;
    sessionStatus?: SessionStatus;
  }): Promise<void>;
  /** Calls that only show state (statuses, reactions): coalesced and never waited on (cosmetic-calls.ts). */
  cosmetic<S>(options: CosmeticOptions<S>): CosmeticBoard<S>;
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
  /** Publishes `view` (type `home`) as the App Home tab of `userId` (routine: after every reply). */
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
  /**
   * A call a person waits on (a search), made only when `method`'s budget has room now and never retried:
   * `SlackApiError` `paced` when it has none, or Slack's error (a 429's Retry-After backs the method off).
   */
  callNow(method: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
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
  /** Slack refused the token itself (`invalid_auth`, `account_inactive`…): the installation is unhealthy. */
  onTokenRefused?: ((slackError: string) => void) | undefined;
  /** The workspace the token belongs to, when known before auth.test (an installation): its budgets pace it. */
  workspace?: string | undefined;
  /** This process's part of the workspace's budgets (pacing/pacer.ts), by workspace; all of them by default. */
  share?: ((workspace: string) => number) | undefined;
}

/** Slack's answers to an append once the stream is over (chat.appendStream's method page). */
const streamOver = new Set(['stopped_by_user', 'message_not_in_streaming_state']);

/** A stream's stop is reserved when it starts; one left unused this long (its reply died) is given back. */
const stopReservationMs = 15 * 60_000;

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

export function createSlackApi(options: SlackApiOptions): SlackApi {
  // On a 429 the client would pause its whole queue for the Retry-After (WebClient.ts, requestQueue.pause(),
  // platforms.md "Checked since"): it answers instead, and the pacing backs off that method alone.
  const client = new WebClient(options.token, {
    ...slackClientOptions(options),
    rejectRateLimitedCalls: true,
  });
  // One token is one installation: its budgets are the workspace's (auth.test names it before any other call).
  let workspace = options.workspace ?? 'workspace';
  const { share } = options;
  const pacer = new Pacer({
    now: options.now,
    onCall: options.onCall,
    ...(share ? { share: () => share(workspace) } : {}),
  });
  const rateLimits: RetryPolicy = { retries: options.retries ?? 2, retryAfterMs };
  const noRetries: RetryPolicy = { ...rateLimits, retries: 0 };
  const hosts = fileHosts(options.apiUrl);
  const tiers = options.rateTiers ?? true;
  const laneOf = (method: string, args: Record<string, unknown>) => slackLane(workspace, method, args, tiers);

  const send = async (method: string, args: Record<string, unknown>) => {
    try {
      const result: unknown = await client.apiCall(method, args);
      return isRecord(result) ? result : {};
    } catch (error) {
      const { slackError } = toSlackApiError(method, error);
      // A call that carries a person's action token may be refused for that token, not the bot's.
      if (tokenRefusals.has(slackError) && !('action_token' in args)) options.onTokenRefused?.(slackError);
      throw error;
    }
  };

  async function call(
    method: string,
    args: Record<string, unknown>,
    priority: Priority = 'reply',
  ): Promise<Record<string, unknown>> {
    try {
      return await pacer.run(method, [laneOf(method, args)], () => send(method, args), rateLimits, {
        priority,
      });
    } catch (error) {
      throw toSlackApiError(method, error);
    }
  }

  /** Stops reserved by streams that started, by the stream's ts. */
  const stops = new Map<string, Reservation>();
  function holdStop(ts: string, reservation: Reservation): void {
    stops.set(ts, reservation);
    setTimeout(() => {
      if (stops.get(ts) !== reservation) return;
      stops.delete(ts);
      reservation.release();
    }, stopReservationMs).unref();
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
      const enterpriseId = stringField(result, 'enterprise_id');
      return {
        userId,
        teamId,
        botId: stringField(result, 'bot_id') ?? '',
        ...(enterpriseId ? { enterpriseId } : {}),
        ...(result.is_enterprise_install === true ? { orgWide: true } : {}),
      };
    },
    postMessage: async ({ channel, threadTs, text, blocks, priority }) => {
      const args = { channel, thread_ts: threadTs, text, blocks, unfurl_links: false };
      return tsOf('chat.postMessage', await call('chat.postMessage', args, priority));
    },
    async updateMessage({ channel, ts, text, blocks, priority }) {
      await call('chat.update', { channel, ts, text, blocks }, priority);
    },
    async deleteMessage({ channel, ts }) {
      await call('chat.delete', { channel, ts });
    },
    async postEphemeral({ channel, user, text, threadTs, blocks }) {
      await call('chat.postEphemeral', { channel, user, text, thread_ts: threadTs, blocks });
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
      const stop = pacer.reserve('chat.stopStream', laneOf('chat.stopStream', { channel }));
      if (!stop) return undefined;
      try {
        const started = pacer.runIfFree(method, [laneOf(method, args)], () => send(method, args), rateLimits);
        if (!started) {
          stop.release();
          return undefined;
        }
        const ts = tsOf(method, await started);
        holdStop(ts, stop);
        return ts;
      } catch (error) {
        stop.release();
        throw toSlackApiError(method, error);
      }
    },
    async appendStream({ channel, ts, markdownText }) {
      try {
        await call('chat.appendStream', { channel, ts, markdown_text: markdownText });
      } catch (error) {
        // Slack ended the stream (a person's stop, its time limit): its stop will not be made.
        if (error instanceof SlackApiError && streamOver.has(error.slackError)) {
          stops.get(ts)?.release();
          stops.delete(ts);
        }
        throw error;
      }
    },
    async stopStream({ channel, ts, markdownText, blocks, sessionStatus }) {
      const method = 'chat.stopStream';
      const args = { channel, ts, markdown_text: markdownText, blocks, session_status: sessionStatus };
      const reserved = stops.get(ts);
      stops.delete(ts);
      if (!reserved) {
        await call(method, args);
        return;
      }
      try {
        await pacer.runReserved(reserved, () => send(method, args), rateLimits);
      } catch (error) {
        throw toSlackApiError(method, error);
      }
    },
    cosmetic: (cosmeticOptions) =>
      cosmeticBoard({ pacer, policy: rateLimits, laneOf, send, logger: options.logger }, cosmeticOptions),
    // No thread_ts: Slack's method page says an agent app's call with one "will silently fail".
    async setSuggestedPrompts({ channel, prompts, title }) {
      await call('assistant.threads.setSuggestedPrompts', { channel_id: channel, prompts, title }, 'routine');
    },
    async callNow(method, args) {
      const running = pacer.runIfFree(method, [laneOf(method, args)], () => send(method, args), noRetries);
      if (!running) throw new SlackApiError(method, 'paced');
      return running.catch((error: unknown) => {
        throw toSlackApiError(method, error);
      });
    },
    async userProfile(userId) {
      // A name only dresses the message: with the tier spent (a burst of new people) or a 429, the turn goes
      // on with the id at once instead of waiting for the budget (prepare.ts keeps what it knew).
      const method = 'users.info';
      const args = { user: userId };
      const lookup = pacer.runIfFree(method, [laneOf(method, args)], () => send(method, args), noRetries);
      if (!lookup) throw new SlackApiError(method, 'paced');
      const result = await lookup.catch((error: unknown) => {
        throw toSlackApiError(method, error);
      });
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
      await call('views.publish', { user_id: userId, view }, 'routine');
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
