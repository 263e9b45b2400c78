import {
  type ConversationEvent,
  type ConversationEventRepository,
  isTurnEnd,
  type StoredConversationEvent,
} from '../../core/contracts/conversation-events.js';
import type { ButlerEvent, EventBus } from '../../core/contracts/event-bus.js';
import type { Logger } from '../../core/contracts/logger.js';
import { ConversationWatch, type WatchTiming } from './conversation-watch.js';
import type { SseStream } from './sse.js';

/**
 * The stored event log of API conversations, and clients following it. Followers of one conversation share
 * one read loop (`ConversationWatch`); appends in this process wake it at once.
 */

export type FollowOutcome = 'turn_end' | 'client_left' | 'idle';

/** Bus events that tell a conversation's log is about to grow, or just did. */
const busSignals: Partial<Record<ButlerEvent['type'], 'busy' | 'turn_started' | 'turn_finished'>> = {
  turn_started: 'turn_started',
  turn_finished: 'turn_finished',
  approval_decided: 'busy',
  approval_expired: 'busy',
};

export class ConversationFeed {
  private readonly watches = new Map<string, ConversationWatch>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly events: ConversationEventRepository,
    private readonly timing: WatchTiming,
    private readonly bus: EventBus | undefined,
    private readonly logger: Logger,
  ) {}

  async append(conversationKey: string, events: readonly ConversationEvent[]): Promise<number[]> {
    const ids = await this.events.append(conversationKey, events);
    this.watches.get(conversationKey)?.wake('busy');
    return ids;
  }

  lastId(conversationKey: string): Promise<number> {
    return this.events.lastId(conversationKey);
  }

  /**
   * Sends the conversation's events after `afterId` until one ends a turn (`done`, `error`,
   * `confirm_required`; with `messageId`, the turn that answers that message), the client leaves, or
   * nothing new comes for `idleMs`. Rejects when reading what it missed fails.
   */
  follow(
    conversationKey: string,
    afterId: number,
    stream: SseStream,
    idleMs: number,
    messageId?: string,
  ): Promise<FollowOutcome> {
    const watch = this.watchOf(conversationKey, afterId);
    return new Promise((resolve, reject) => {
      let last = afterId;
      let catchingUp = false;
      let finished = false;
      let idleTimer: NodeJS.Timeout | undefined;
      const finish = (outcome: FollowOutcome | Error) => {
        if (finished) return;
        finished = true;
        clearTimeout(idleTimer);
        leave();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const restartIdle = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => finish('idle'), idleMs);
      };
      const deliver = (events: readonly StoredConversationEvent[]) => {
        let sent = false;
        for (const { id, event } of events) {
          if (finished) return;
          if (id <= last) continue;
          stream.send(event, id);
          last = id;
          sent = true;
          if (isTurnEnd(event, messageId)) return finish('turn_end');
        }
        if (sent) restartIdle();
      };
      // Behind the shared loop (joined late, or missed a page): read directly until level with it.
      const catchUp = async () => {
        catchingUp = true;
        try {
          while (!finished) {
            const page = await this.events.listAfter(conversationKey, last, this.timing.pageSize);
            deliver(page);
            if (page.length < this.timing.pageSize && last >= watch.tail) break;
          }
        } catch (error) {
          finish(error instanceof Error ? error : new Error(String(error)));
        } finally {
          catchingUp = false;
        }
      };
      const leave = watch.add((page) => {
        if (finished || catchingUp) return;
        if (page.from > last) void catchUp();
        else deliver(page.events);
      });
      stream.onClose(() => finish('client_left'));
      restartIdle();
      if (watch.tail > last) void catchUp();
    });
  }

  /** Sends every stored event of the conversation after `afterId`, page by page, without waiting for more. */
  async readStored(conversationKey: string, afterId: number, stream: SseStream): Promise<void> {
    for (let last = afterId; ; ) {
      const page = await this.events.listAfter(conversationKey, last, this.timing.pageSize);
      for (const { id, event } of page) stream.send(event, id);
      last = page.at(-1)?.id ?? last;
      if (page.length < this.timing.pageSize) return;
    }
  }

  /** Stops listening to the bus (the open streams are ended by their owner). */
  close(): void {
    this.unsubscribe?.();
  }

  private watchOf(conversationKey: string, afterId: number): ConversationWatch {
    const existing = this.watches.get(conversationKey);
    if (existing) return existing;
    // The bus is listened to from the first stream on: a process that serves none opens no LISTEN.
    this.unsubscribe ??= this.bus?.subscribe((event) => {
      const signal = busSignals[event.type];
      if (signal) this.watches.get(event.conversationKey)?.wake(signal);
    });
    const watch = new ConversationWatch(
      conversationKey,
      afterId,
      this.events,
      { ...this.timing, quietWhenIdle: this.bus !== undefined },
      this.logger,
      () => {
        if (this.watches.get(conversationKey) === watch) this.watches.delete(conversationKey);
      },
    );
    this.watches.set(conversationKey, watch);
    return watch;
  }
}
