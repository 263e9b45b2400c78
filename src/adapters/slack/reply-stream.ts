import type { ReplyStream } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { ReplyDelivery } from '../connector.js';
import { openFence, splitPoint } from './markdown-split.js';
import { defuseMarkdown, StreamingMarkdownDefuser } from './mentions.js';
import { ReplyEnding } from './reply-ending.js';
import {
  fenceCloser,
  fenceReopener,
  newSegment,
  rewriteFrom,
  type Segment,
  segmentContent,
  segmentRoom,
} from './reply-segment.js';
import { ReplySender, type ReplySenderOptions, slackError } from './reply-sender.js';

export interface SlackReplyOptions extends ReplySenderOptions {
  /** Messages of an interrupted earlier attempt: overwritten in order instead of posting anew. */
  resume?: readonly string[];
  onMessageCreated?: (messageId: string) => void | Promise<void>;
  /** Hears how the reply went out, once it is whole (metrics). */
  onDelivered?: (way: ReplyDelivery) => void;
  now?: () => number;
}

const streamEndedErrors = new Set(['message_not_in_streaming_state', 'streaming_state_conflict']);

/**
 * A streamed Slack reply: chat.startStream/appendStream/stopStream when Slack allows it, else
 * chat.postMessage then chat.update at most once per `updateIntervalMs`. Rolls over into a new
 * message when one grows past the limit or Slack ends its stream; `finish` makes the messages
 * show exactly the final text. Appends never wait for Slack: a single background pump sends
 * whatever has accumulated. All live replies of the workspace share each method's budget: the more
 * stream at once, the further apart each one's calls; with no stream budget left, nothing waits: the message
 * is deferred, streams if the budget frees while the model writes, else is posted whole once written. The
 * message that ends the reply carries the feedback buttons.
 */
export class SlackReply implements ReplyStream {
  private readonly options: SlackReplyOptions;
  private readonly now: () => number;
  private readonly sender: ReplySender;
  private readonly defuser: StreamingMarkdownDefuser;
  private text = '';
  private readonly segments: Segment[] = [];
  /** Older messages to overwrite before posting new ones; `stopFirst` when they may still be streaming. */
  private reusable: Array<{ ts: string; stopFirst: boolean }>;
  private nextPrefix = '';
  private userStopped = false;
  private finishing = false;
  /** Where the feedback buttons go: the message that ends the reply, once the final pump runs. */
  private readonly ending = new ReplyEnding();
  private failure: unknown;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  /** How the reply's first message went out, and whether it waited for a stream budget first. */
  private delivery: ReplyDelivery | undefined;
  private wasDeferred = false;

  constructor(options: SlackReplyOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.sender = new ReplySender(options);
    this.defuser = new StreamingMarkdownDefuser();
    this.reusable = (options.resume ?? []).map((ts) => ({ ts, stopFirst: true }));
  }

  get messageIds(): readonly string[] {
    return this.segments.flatMap((segment) => (segment.ts ? [segment.ts] : []));
  }

  async append(delta: string): Promise<void> {
    if (this.finishing || this.userStopped || delta.length === 0) return;
    // The model's words never ping a channel or hide a link: Slack markup in them stays inert.
    this.text += this.defuser.push(delta);
    if (this.failure === undefined) this.schedule();
  }

  async finish(text: string): Promise<void> {
    this.finishing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    try {
      if (this.userStopped) return;
      this.reconcile(defuseMarkdown(text));
      this.failure = undefined;
      this.ending.closing = true;
      await this.pump(true);
      await this.discardUnusedMessages();
      if (this.delivery) this.options.onDelivered?.(this.delivery);
    } finally {
      this.sender.leave();
    }
  }

  private schedule(): void {
    if (this.timer || this.finishing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running
        .then(() => this.pump(false))
        .catch((error: unknown) => {
          this.failure = error;
          this.log().warn({ slackError: slackError(error) }, 'reply delivery failed; retrying at finish');
        })
        .then(() => {
          if (this.failure === undefined && this.hasUndelivered()) this.schedule();
        });
    }, this.nextDelay());
  }

  private nextDelay(): number {
    const segment = this.current();
    if (!segment) return 0;
    return Math.max(0, segment.lastCallAt + this.sender.interval(segment) - this.now());
  }

  private current(): Segment | undefined {
    const last = this.segments.at(-1);
    return last && !last.sealed ? last : undefined;
  }

  private committed(): number {
    return this.segments.at(-1)?.end ?? 0;
  }

  private hasUndelivered(): boolean {
    const segment = this.current();
    if (this.committed() < this.text.length || segment?.mode === 'deferred') return true;
    return segment?.mode === 'static' && segment.shown !== segmentContent(segment, this.text);
  }

  private log(): Logger {
    return this.options.logger;
  }

  private async pump(final: boolean): Promise<void> {
    for (;;) {
      await this.fill(final);
      const segment = this.current();
      if (!segment || this.userStopped) return;
      if (!final) {
        if (segment.mode === 'deferred') await this.startDeferred(segment);
        else if (segment.mode === 'static' && this.nextDelay() === 0) await this.pushStatic(segment);
        return;
      }
      // Sealing can hand text back (a message Slack would not let Butler edit): go round again.
      await this.seal(segment);
      if (this.committed() >= this.text.length) return;
    }
  }

  /** Places pending text into messages: appends to streams, extends posted messages (pushed later). */
  private async fill(final: boolean): Promise<void> {
    while (!this.userStopped) {
      const segment = this.current();
      if (!segment) {
        if (this.committed() >= this.text.length) break;
        await this.openSegment(this.committed());
        continue;
      }
      const available = this.text.slice(segment.end);
      const room = segmentRoom(segment, this.options.tuning.messageLimit);
      if (segment.full || room <= 0) {
        await this.seal(segment);
        continue;
      }
      if (available.length === 0) break;
      // A stream keeps its cadence (its share of the workspace's append budget) until the end.
      if (segment.mode === 'stream' && !final && this.nextDelay() > 0) break;
      const take = splitPoint(available, room);
      const piece = available.slice(0, take);
      const fillsUp = take < available.length;
      if (segment.mode !== 'stream') {
        segment.end += take;
        segment.full = fillsUp;
        if (!fillsUp) break;
        continue;
      }
      const stopWithPiece =
        final && !fillsUp && openFence(segmentContent(segment, this.text) + piece) === undefined;
      const sent = await this.streamCall(segment, () =>
        stopWithPiece
          ? this.sender.stop(segment.ts, {
              markdownText: piece,
              blocks: this.ending.feedbackFor(segment, this.text, take),
              final: true,
            })
          : this.sender.append(segment.ts, piece),
      );
      if (!sent) continue;
      if (stopWithPiece) this.ending.shown(segment, this.text, take);
      segment.end += take;
      segment.full = fillsUp;
      if (stopWithPiece) {
        segment.open = false;
        segment.sealed = true;
      }
    }
  }

  /** Creates the next message (reusing an older one first) holding text from `start`. */
  private async openSegment(start: number): Promise<void> {
    const prefix = this.nextPrefix;
    const available = this.text.slice(start);
    const room = this.options.tuning.messageLimit - fenceCloser.length - prefix.length;
    const take = splitPoint(available, room);
    const segment = newSegment(start, start + take, prefix, take < available.length);
    const markdown = segmentContent(segment, this.text);
    const reused = this.reusable.shift();
    if (reused !== undefined) {
      segment.ts = reused.ts;
      // An interrupted attempt may have left its stream open; chat.update needs it stopped.
      if (reused.stopFirst) await this.sender.stop(reused.ts, { final: false }).catch(() => {});
      this.segments.push(segment);
      await this.pushStatic(segment);
      if (this.segments.at(-1) === segment) return;
    }
    const started = await this.sender.startStream(markdown);
    if (started === 'spent') {
      this.wasDeferred = true;
      Object.assign(segment, { mode: 'deferred', lastCallAt: this.now() });
      this.segments.push(segment);
      return;
    }
    if (started !== undefined) {
      Object.assign(segment, { ts: started, mode: 'stream', open: true, lastCallAt: this.now() });
      await this.created(segment);
      return;
    }
    segment.ts = await this.sender.post(segment, markdown);
    segment.shown = markdown;
    segment.shownEnd = segment.end;
    segment.lastCallAt = this.now();
    await this.created(segment);
  }

  /** A deferred message streams once the budget has room; where streaming fails it is posted at once. */
  private async startDeferred(segment: Segment): Promise<void> {
    const started = await this.sender.startStream(segmentContent(segment, this.text));
    if (started === 'spent') {
      segment.lastCallAt = this.now();
      return;
    }
    if (started === undefined) return this.postDeferred(segment);
    Object.assign(segment, { ts: started, mode: 'stream', open: true, lastCallAt: this.now() });
    await this.created(segment);
  }

  /** The cheaper delivery: a deferred message posted in one call, with all its text. */
  private async postDeferred(segment: Segment): Promise<void> {
    const markdown = segmentContent(segment, this.text);
    segment.ts = await this.sender.post(segment, markdown, this.ending.feedbackFor(segment, this.text));
    this.ending.shown(segment, this.text);
    Object.assign(segment, {
      mode: 'static',
      shown: markdown,
      shownEnd: segment.end,
      lastCallAt: this.now(),
    });
    await this.created(segment);
  }

  private async created(segment: Segment): Promise<void> {
    if (!this.segments.includes(segment)) this.segments.push(segment);
    // The reply's way is its first message's: streamed, posted whole (no stream budget), or posted and edited.
    this.delivery ??= segment.mode === 'stream' ? 'stream' : this.wasDeferred ? 'posted' : 'updated';
    await this.options.onMessageCreated?.(segment.ts);
  }

  /** Runs a stream call; on failure decides between rolling over, stopping, and falling back. */
  private async streamCall(segment: Segment, call: () => Promise<void>): Promise<boolean> {
    try {
      await call();
      segment.lastCallAt = this.now();
      return true;
    } catch (error) {
      const code = slackError(error);
      segment.open = false;
      if (code !== 'stopped_by_user' && !streamEndedErrors.has(code)) {
        this.sender.stopStreaming();
        this.log().warn({ slackError: code }, 'stream append failed; finishing the message with chat.update');
        await this.sender.stop(segment.ts, { final: false }).catch(() => {});
        this.continueStatically(segment);
        return false;
      }
      segment.sealed = true;
      this.nextPrefix = fenceReopener(segment, this.text);
      if (code === 'stopped_by_user') {
        this.userStopped = true;
        this.log().info('reply stream stopped by the user');
      } else {
        this.log().info({ slackError: code }, 'Slack ended the stream; continuing in a new message');
      }
      return false;
    }
  }

  /**
   * A stopped stream is an ordinary message that chat.update can extend: the rest of the reply goes into
   * the same message instead of a second one that would start mid-word.
   */
  private continueStatically(segment: Segment): void {
    Object.assign(segment, {
      mode: 'static',
      shown: segmentContent(segment, this.text),
      shownEnd: segment.end,
      lastCallAt: this.now(),
    });
  }

  /** Closes a message for good: balanced fences, stream stopped, static text delivered. */
  private async seal(segment: Segment): Promise<void> {
    this.nextPrefix = fenceReopener(segment, this.text);
    const closure = this.nextPrefix ? fenceCloser : '';
    if (segment.mode === 'stream') {
      if (segment.open) {
        try {
          const feedback = this.ending.feedbackFor(segment, this.text);
          await this.sender.stop(segment.ts, {
            markdownText: closure,
            ...(feedback ? { blocks: feedback } : {}),
            final: this.ending.ends(segment, this.text),
          });
          this.ending.shown(segment, this.text);
          segment.closure = closure;
        } catch (error) {
          this.log().info({ slackError: slackError(error) }, 'could not stop the stream; it ends on its own');
        }
        segment.open = false;
      }
    } else if (segment.mode === 'deferred') {
      segment.closure = closure;
      await this.postDeferred(segment);
    } else {
      segment.closure = closure;
      await this.pushStatic(segment);
    }
    segment.sealed = true;
  }

  /** chat.update with the segment's Markdown (and the feedback buttons at the end), no more often than its interval. */
  private async pushStatic(segment: Segment): Promise<void> {
    const markdown = segmentContent(segment, this.text);
    const feedback = this.ending.feedbackFor(segment, this.text);
    if (segment.shown === markdown && (!feedback || this.ending.feedbackOn === segment.ts)) return;
    const refused = await this.sender.updateInTurn(segment, markdown, feedback, this.now);
    if (refused) return this.abandon(segment, refused);
    this.ending.shown(segment, this.text);
    segment.shown = markdown;
    segment.shownEnd = segment.end;
    segment.lastCallAt = this.now();
  }

  /**
   * A message Slack will not let Butler edit (deleted, too old): it keeps what it shows and the rest
   * of the text goes into a new message. One that shows none of this reply is dropped.
   */
  private abandon(segment: Segment, code: string): void {
    this.log().info({ slackError: code }, 'could not edit a reply message; continuing in a new one');
    if (segment.shownEnd === segment.start) {
      this.segments.splice(this.segments.indexOf(segment), 1);
      return;
    }
    Object.assign(segment, { end: segment.shownEnd, closure: '', sealed: true, full: false });
    this.nextPrefix = fenceReopener(segment, this.text);
  }

  /**
   * Makes `final` the reply's text. Usually it extends what was appended; when it does not (the
   * core rewrote the reply), messages from the first difference on are rewritten in place.
   */
  private reconcile(final: string): void {
    const rewrite = rewriteFrom(this.segments, this.text, final);
    this.text = rewrite.text;
    if (!rewrite.affected) return;
    this.nextPrefix = rewrite.affected.prefix;
    this.reusable = [...rewrite.affected.reusable, ...this.reusable];
  }

  /** Deletes messages of an earlier attempt that the final text no longer needs. */
  private async discardUnusedMessages(): Promise<void> {
    const unused = this.reusable.splice(0);
    for (const { ts } of unused) {
      await this.sender.remove(ts).catch((error: unknown) => {
        this.log().info({ slackError: slackError(error) }, 'could not delete an unused reply message');
      });
    }
  }
}
