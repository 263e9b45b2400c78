import type { ReplyTarget } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { Share } from '../pacing/index.js';
import type { SessionFold } from './agent-sessions.js';
import type { SharedSlackMethod } from './rate-tiers.js';
import {
  isTransientSlackError,
  type ReplyTuning,
  recordStreamingFailure,
  replyThreadTs,
  type SlackCapabilities,
  staticMessage,
  streamingAvailable,
  streamingPlace,
  withMarkdownFallback,
} from './reply-format.js';
import type { Segment } from './reply-segment.js';
import { type SlackApi, SlackApiError, type SlackBlocks } from './slack-api.js';

export interface ReplySenderOptions {
  api: SlackApi;
  logger: Logger;
  target: ReplyTarget;
  tuning: ReplyTuning;
  capabilities: SlackCapabilities;
  /** The thread's agent session, told by each stop of a stream (agent-sessions.ts). */
  session?: SessionFold | undefined;
}

export function slackError(error: unknown): string {
  return error instanceof SlackApiError ? error.slackError : 'unknown_error';
}

/**
 * How one reply's messages reach Slack: where (channel and thread), which way (stream, or post and update),
 * and how often, as this reply's share of the workspace's budget for each method.
 */
export class ReplySender {
  readonly channel: string;
  readonly threadTs: string | undefined;
  private readonly options: ReplySenderOptions;
  private streaming: boolean;
  private share: { method: SharedSlackMethod; budget: Share } | undefined;

  constructor(options: ReplySenderOptions) {
    this.options = options;
    this.channel = options.target.address.channel;
    this.threadTs = replyThreadTs(options.target);
    // Slack streams only replies, and in a channel only to a recipient: without a thread to answer in, or a Slack
    // user to answer (a task an API key made), the reply is posted and updated.
    const recipient = this.channel.startsWith('D') || options.target.userId !== '';
    this.streaming =
      this.threadTs !== undefined &&
      recipient &&
      streamingAvailable(options.capabilities, streamingPlace(this.channel, this.threadTs));
  }

  /** The spacing of this reply's calls on `segment`: the tuning's, stretched to its share of the budget. */
  interval(segment: Segment): number {
    const { streamIntervalMs, updateIntervalMs } = this.options.tuning;
    if (segment.mode === 'deferred') return streamIntervalMs;
    const [method, base]: [SharedSlackMethod, number] =
      segment.mode === 'stream' ? ['chat.appendStream', streamIntervalMs] : ['chat.update', updateIntervalMs];
    if (this.share?.method !== method) {
      this.share?.budget.leave();
      this.share = { method, budget: this.options.api.share(method) };
    }
    return Math.max(base, this.share.budget.intervalMs());
  }

  /** The reply is done: its part of the budget goes back to the others. */
  leave(): void {
    this.share?.budget.leave();
    this.share = undefined;
  }

  /** After a failed append the rest of the reply posts and updates. */
  stopStreaming(): void {
    this.streaming = false;
  }

  /**
   * A stream holding `markdown`: its ts; `spent` when the workspace's stream budget has no room now (nothing
   * sent); undefined when streaming does not work here (the reply then posts and updates).
   */
  async startStream(markdown: string): Promise<string | 'spent' | undefined> {
    if (!this.streaming || this.threadTs === undefined) return undefined;
    // Streams in channels name their recipient (platforms.md §5 and "Checked since"); a DM has one. In a Slack
    // Connect channel the recipient's team is their own workspace, not the app's ("Checked 2026-11-27").
    const { userId, userTeam, address } = this.options.target;
    const recipient = this.channel.startsWith('D')
      ? {}
      : { recipientUserId: userId, recipientTeamId: userTeam ?? address.workspace };
    try {
      const ts = await this.options.api.startStream({
        channel: this.channel,
        threadTs: this.threadTs,
        markdownText: markdown,
        ...recipient,
      });
      return ts ?? 'spent';
    } catch (error) {
      const code = slackError(error);
      recordStreamingFailure(this.options.capabilities, streamingPlace(this.channel, this.threadTs), code);
      this.streaming = false;
      this.options.logger.info(
        { slackError: code },
        'streaming unavailable; falling back to post and update',
      );
      return undefined;
    }
  }

  append(ts: string, markdownText: string): Promise<void> {
    return this.options.api.appendStream({ channel: this.channel, ts, markdownText });
  }

  /**
   * `blocks` go below the streamed text (the feedback buttons of the reply's last message). Blocks Slack
   * refuses must not leave the stream open: it is then stopped without them. `final`: this message ends the
   * reply; a stop before that keeps the thread's agent session `processing`, since the turn goes on.
   */
  async stop(
    ts: string,
    options: { markdownText?: string; blocks?: SlackBlocks | undefined; final: boolean },
  ): Promise<void> {
    const { markdownText, blocks, final } = options;
    const sessionStatus = this.options.session?.statusForStop(final);
    const stop = (extra: SlackBlocks | undefined) =>
      this.options.api.stopStream({
        channel: this.channel,
        ts,
        ...(markdownText ? { markdownText } : {}),
        ...(extra ? { blocks: extra } : {}),
        ...(sessionStatus ? { sessionStatus } : {}),
      });
    try {
      await stop(blocks);
    } catch (error) {
      if (!blocks || slackError(error) !== 'invalid_blocks') throw error;
      this.options.logger.info('Slack refused the feedback buttons; stopping the stream without them');
      await stop(undefined);
    }
    this.options.session?.stopped(sessionStatus);
  }

  post(segment: Segment, markdown: string, extra?: SlackBlocks): Promise<string> {
    const thread = this.threadTs ? { threadTs: this.threadTs } : {};
    return withMarkdownFallback(segment, (blocks) =>
      this.options.api.postMessage({
        channel: this.channel,
        ...thread,
        ...staticMessage(markdown, blocks, extra),
      }),
    );
  }

  update(segment: Segment, markdown: string, extra?: SlackBlocks): Promise<void> {
    return withMarkdownFallback(segment, (blocks) =>
      this.options.api.updateMessage({
        channel: this.channel,
        ts: segment.ts,
        ...staticMessage(markdown, blocks, extra),
      }),
    );
  }

  /**
   * chat.update of a posted message, no sooner than its interval after its last call. Undefined once updated;
   * Slack's error when it will not let Butler edit the message (deleted, too old); throws a passing failure.
   */
  async updateInTurn(
    segment: Segment,
    markdown: string,
    extra: SlackBlocks | undefined,
    now: () => number,
  ): Promise<string | undefined> {
    const wait = segment.lastCallAt + this.interval(segment) - now();
    if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
    try {
      await this.update(segment, markdown, extra);
      return undefined;
    } catch (error) {
      if (isTransientSlackError(slackError(error))) throw error;
      return slackError(error);
    }
  }

  remove(ts: string): Promise<void> {
    return this.options.api.deleteMessage({ channel: this.channel, ts });
  }
}
