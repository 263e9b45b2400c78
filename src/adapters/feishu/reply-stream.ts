import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReplyStream } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { ReplyDelivery } from '../connector.js';
import type { Priority, Share } from '../pacing/index.js';
import { type CardkitHealth, pointsAtPlatform } from './cardkit-health.js';
import { addFeedbackButtons } from './feedback-buttons.js';
import { isRateLimited } from './feishu-api-error.js';
import type { FeishuApi, MessageDestination, OutgoingMessage } from './feishu-api-types.js';
import type { JsonRecord } from './fields.js';
import {
  closedStreamingSettings,
  markdownCard,
  replyCardFits,
  replyElementId,
  streamingCard,
} from './reply-cards.js';
import { adoptFinalText, openSegment, type Segment } from './reply-segment.js';
import { ResumedMessages } from './resumed-messages.js';
import { type StopButtonValue, stopElementId, withStopButton } from './stop-button.js';
import type { StreamSettings } from './stream-settings.js';
import { chooseCut, renderSlice } from './text-layout.js';

export interface FeishuReplyStreamOptions {
  api: FeishuApi;
  destination: MessageDestination;
  logger: Logger;
  now: () => number;
  settings: StreamSettings;
  cardkit: CardkitHealth;
  /** Messages of an interrupted earlier attempt, overwritten in order before anything new is posted. */
  resume: readonly string[];
  onMessageCreated: ((messageId: string) => void | Promise<void>) | undefined;
  /** What the Stop button the open card shows while Butler writes sends back when clicked. */
  stop: StopButtonValue;
  /** Hears how the reply went out, once it is whole (metrics). */
  onDelivered: ((way: ReplyDelivery) => void) | undefined;
}

const cardkitFailuresBeforeFallback = 3;
const maxBackoffMilliseconds = 10_000;

/**
 * A streaming reply: CardKit streaming cards (typewriter updates with increasing `sequence`), or, when CardKit
 * fails, an interactive card patched at a slower pace. Long or long-running replies roll over into new cards;
 * the last one ends with the feedback buttons.
 * Updates run one at a time; `append` never waits for the network and never throws.
 */
export class FeishuReplyStream implements ReplyStream {
  private text = '';
  private readonly segments: Segment[] = [];
  private readonly resumed: ResumedMessages;
  private readonly extraMessageIds: string[] = [];
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private framePending = false;
  private nextUpdateAt = 0;
  private syncedText: string | undefined;
  private frameFailures = 0;
  private cardkitAllowed = true;
  private finished = false;
  /** This reply's part of the app's budget for the endpoint it updates through. */
  private budget: { endpoint: 'cardElement.content' | 'message.patch'; share: Share } | undefined;
  /** Names this reply to the shared CardKit health, which needs failures of several replies to give up. */
  private readonly replyId = randomUUID();

  constructor(private readonly options: FeishuReplyStreamOptions) {
    this.resumed = new ResumedMessages(options.api, options.resume, options.logger);
  }

  get messageIds(): readonly string[] {
    const ids = this.segments.map((segment) => segment.messageId).filter((id) => id !== undefined);
    return [...ids, ...this.extraMessageIds];
  }

  async append(delta: string): Promise<void> {
    if (this.finished || delta.length === 0) return;
    this.text += delta;
    this.schedule();
  }

  async finish(text: string): Promise<void> {
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.work;
    // The final update keeps the pace too (CardKit: 10 operations per second per card).
    await sleep(this.untilNextUpdate());
    this.text = adoptFinalText(this.segments, this.text, text);
    let lastError: unknown;
    for (let attempt = 0; attempt < this.options.settings.finishAttempts; attempt += 1) {
      try {
        await this.sync();
        this.nextUpdateAt = this.options.now() + this.interval();
        lastError = undefined;
        break;
      } catch (error) {
        lastError = error;
        this.options.logger.warn({ attempt, err: error }, 'Feishu reply: final update failed; retrying');
        await sleep(this.backoff(attempt + 1));
      }
    }
    if (lastError !== undefined) await this.deliverRemainder();
    for (const segment of this.segments) await this.closeStreaming(segment);
    await this.resumed.release();
    const last = this.segments.at(-1);
    // The reply's last card takes the feedback buttons (none when the text ended up in extra messages).
    if (last?.messageId !== undefined && this.extraMessageIds.length === 0) {
      // The buttons are one more update of the card: they keep its pace too.
      await sleep(this.untilNextUpdate());
      if (last.mode === 'cardkit') last.sequence += 1;
      const cardId = last.mode === 'cardkit' ? last.cardId : undefined;
      const card = { messageId: last.messageId, cardId, sequence: last.sequence, content: this.render(last) };
      await addFeedbackButtons(this.options.api, card, this.options.logger);
    }
    this.budget?.share.leave();
    const first = this.segments[0];
    if (first?.messageId !== undefined)
      this.options.onDelivered?.(first.mode === 'cardkit' ? 'stream' : 'updated');
  }

  /**
   * The spacing of this reply's updates: its settings', stretched to its part of the app's budget for the
   * endpoint (each endpoint 1000/min and 50/s per app), so many replies at once each update less often instead
   * of queueing behind each other.
   */
  private interval(): number {
    const mode = this.segments.at(-1)?.mode ?? 'cardkit';
    const { settings } = this.options;
    const endpoint = mode === 'cardkit' ? 'cardElement.content' : 'message.patch';
    if (this.budget?.endpoint !== endpoint) {
      this.budget?.share.leave();
      this.budget = { endpoint, share: this.options.api.share(endpoint) };
    }
    const base =
      mode === 'cardkit' ? settings.cardkitIntervalMilliseconds : settings.patchIntervalMilliseconds;
    return Math.max(base, this.budget.share.intervalMs());
  }

  /** Updates while the model writes give way to replies being finished. */
  private priority(): Priority {
    return this.finished ? 'reply' : 'routine';
  }

  private backoff(failures: number): number {
    return Math.min(this.interval() * 2 ** failures, maxBackoffMilliseconds);
  }

  /** At most one frame is waiting or running; a frame that ends with new text schedules the next. */
  private schedule(): void {
    if (this.framePending || this.finished) return;
    this.framePending = true;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const frame = this.work.then(() => this.frame());
      this.work = frame.catch(() => {});
    }, this.untilNextUpdate());
  }

  private untilNextUpdate(): number {
    return Math.max(0, this.nextUpdateAt - this.options.now());
  }

  /** One throttled update while the model is still writing. Failures skip the frame; the next one catches up. */
  private async frame(): Promise<void> {
    if (this.finished) return;
    try {
      await this.sync();
      this.frameFailures = 0;
      this.nextUpdateAt = this.options.now() + this.interval();
    } catch (error) {
      this.frameFailures += 1;
      const rateLimited = isRateLimited(error);
      this.options.logger[rateLimited ? 'debug' : 'warn'](
        { err: error, failures: this.frameFailures },
        rateLimited
          ? 'Feishu reply: rate limited; skipping a frame'
          : 'Feishu reply: update failed; skipping a frame',
      );
      this.nextUpdateAt = this.options.now() + this.backoff(this.frameFailures);
    }
    this.framePending = false;
    if (this.text !== this.syncedText) this.schedule();
  }

  private newSegment(start: number): Segment {
    const cardkit = this.cardkitAllowed && this.options.cardkit.usable(this.options.now());
    const segment = openSegment(start, cardkit ? 'cardkit' : 'patch', this.options.now());
    this.segments.push(segment);
    return segment;
  }

  private render(segment: Segment, text = this.text): string {
    return renderSlice(text, segment.start, segment.end ?? text.length) || '…';
  }

  private readonly fits = (content: string): boolean => replyCardFits(content, this.options.settings);

  /** Only the card still being written offers Stop; a finished or rolled-over one does not. */
  private offersStop(segment: Segment): boolean {
    return !this.finished && segment.end === undefined;
  }

  private patchCard(content: string, stoppable: boolean): JsonRecord {
    return stoppable ? withStopButton(markdownCard(content), this.options.stop) : markdownCard(content);
  }

  /**
   * Brings every card up to date with the text as it is now (text that arrives meanwhile waits for the next
   * frame, so nothing unmeasured is sent), rolling over into new cards where one is too old or too full.
   */
  private async sync(): Promise<void> {
    const text = this.text;
    let segment = this.segments.at(-1) ?? this.newSegment(0);
    const { settings } = this.options;
    for (;;) {
      const tooFull = !this.fits(this.render(segment, text));
      const tooOld =
        segment.mode === 'cardkit' &&
        segment.messageId !== undefined &&
        this.options.now() - segment.openedAt >= settings.cardkitRolloverMilliseconds;
      if (!tooFull && !tooOld) break;
      segment.end = tooFull ? chooseCut(text, segment.start, this.fits) : text.length;
      await this.show(segment, text);
      await this.closeStreaming(segment);
      this.options.logger.debug(
        { cards: this.segments.length + 1, reason: tooFull ? 'full' : 'age' },
        'Feishu reply: rolling over',
      );
      segment = this.newSegment(segment.end);
    }
    for (const each of this.segments) await this.show(each, text);
    this.syncedText = text;
  }

  private async show(segment: Segment, text: string): Promise<void> {
    const end = segment.end ?? text.length;
    if (segment.messageId === undefined) {
      if (end <= segment.start) return;
      await this.createMessage(segment, text);
      // Text that arrived meanwhile waits for the next frame, so a new card is not updated at once.
      if (!this.finished) return;
    }
    const content = this.render(segment, text);
    // A CardKit card loses its Stop button when it is closed (closeStreaming).
    const stoppable = segment.mode === 'patch' ? this.offersStop(segment) : segment.stoppable;
    if (content === segment.shown && stoppable === segment.stoppable) {
      segment.shownEnd = end;
      return;
    }
    if (segment.mode === 'patch') {
      await this.options.api.patchMessage(
        segment.messageId as string,
        this.patchCard(content, stoppable),
        this.priority(),
      );
    } else {
      try {
        segment.sequence += 1;
        await this.options.api.updateCardElement(
          segment.cardId as string,
          replyElementId,
          content,
          segment.sequence,
          this.priority(),
        );
        segment.failures = 0;
      } catch (error) {
        // Once this reply gives up on CardKit, the rest continues in a patched card, shown in this same pass.
        if (!isRateLimited(error) && this.noteCardkitFailure(segment, error)) return;
        throw error;
      }
    }
    segment.shown = content;
    segment.shownEnd = end;
    segment.stoppable = stoppable;
  }

  /** After repeated CardKit failures the rest of this reply (only) continues in a patched card: true then. */
  private noteCardkitFailure(segment: Segment, error: unknown): boolean {
    segment.failures += 1;
    if (segment.failures < cardkitFailuresBeforeFallback || segment.end !== undefined) return false;
    this.options.logger.warn(
      { cardId: segment.cardId, err: error },
      'Feishu reply: CardKit updates keep failing; continuing in a new card',
    );
    if (pointsAtPlatform(error)) this.options.cardkit.failed(this.options.now(), this.replyId);
    this.cardkitAllowed = false;
    segment.end = segment.shownEnd;
    this.newSegment(segment.shownEnd);
    return true;
  }

  private async createMessage(segment: Segment, text: string): Promise<void> {
    const content = this.render(segment, text);
    const end = segment.end ?? text.length;
    const stoppable = this.offersStop(segment);
    const { api, logger } = this.options;
    const resumed = await this.resumed.overwrite(this.patchCard(content, stoppable));
    if (resumed !== undefined) {
      Object.assign(segment, {
        messageId: resumed,
        shownEnd: end,
        mode: 'patch',
        shown: content,
        openedAt: this.options.now(),
        stoppable,
      });
      return;
    }
    let message: OutgoingMessage = { msgType: 'interactive', content: this.patchCard(content, stoppable) };
    if (segment.mode === 'cardkit') {
      try {
        if (segment.cardId === undefined) {
          const card = streamingCard(content);
          segment.cardId = await api.createCard(stoppable ? withStopButton(card, this.options.stop) : card);
          segment.shown = content;
          segment.shownEnd = end;
          segment.stoppable = stoppable;
        }
        message = { msgType: 'interactive', content: { type: 'card', data: { card_id: segment.cardId } } };
      } catch (error) {
        logger.warn({ err: error }, 'Feishu reply: CardKit unavailable; falling back to patching a card');
        if (pointsAtPlatform(error)) this.options.cardkit.failed(this.options.now(), this.replyId);
        this.cardkitAllowed = false;
        segment.mode = 'patch';
      }
    }
    const messageId = await api.sendMessage(this.options.destination, message);
    segment.messageId = messageId;
    segment.openedAt = this.options.now();
    if (segment.mode === 'patch') {
      segment.shown = content;
      segment.shownEnd = end;
      segment.stoppable = stoppable;
    }
    logger.debug({ messageId, mode: segment.mode }, 'Feishu reply: message created');
    await this.options.onMessageCreated?.(messageId);
  }

  private async closeStreaming(segment: Segment): Promise<void> {
    if (segment.mode !== 'cardkit' || segment.closed || !segment.cardId || !segment.messageId) return;
    segment.closed = true;
    // Closing is a CardKit operation too: keep the pace after the final update.
    await sleep(this.untilNextUpdate());
    if (segment.stoppable) await this.removeStopButton(segment, segment.cardId);
    try {
      segment.sequence += 1;
      const text = this.text.slice(segment.start, segment.end ?? this.text.length);
      await this.options.api.updateCardSettings(
        segment.cardId,
        closedStreamingSettings(text),
        segment.sequence,
      );
    } catch (error) {
      // CardKit closes streaming by itself after about 10 minutes; the text is already in place.
      this.options.logger.warn(
        { cardId: segment.cardId, err: error },
        'Feishu reply: could not close streaming mode',
      );
    }
  }

  /** CardKit removes an element whether or not the card still streams (its "Stop generating" example). */
  private async removeStopButton(segment: Segment, cardId: string): Promise<void> {
    try {
      segment.sequence += 1;
      await this.options.api.deleteCardElement(cardId, stopElementId, segment.sequence);
      segment.stoppable = false;
    } catch (error) {
      // A click on a leftover button only hears that nothing is running.
      this.options.logger.warn({ cardId, err: error }, 'Feishu reply: could not remove the Stop button');
    }
  }

  /** Last resort for the "full final text" promise: post whatever the cards could not show as new messages. */
  private async deliverRemainder(): Promise<void> {
    for (const segment of this.segments) {
      const content = this.render(segment);
      const end = segment.end ?? this.text.length;
      if (content === segment.shown || (segment.messageId === undefined && end <= segment.start)) continue;
      const messageId = await this.options.api.sendMessage(this.options.destination, {
        msgType: 'interactive',
        content: markdownCard(content),
      });
      this.extraMessageIds.push(messageId);
      this.options.logger.warn({ messageId }, 'Feishu reply: posted the final text as a new message');
      await this.options.onMessageCreated?.(messageId);
    }
  }
}
