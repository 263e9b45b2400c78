import {
  type ConversationEventRepository,
  isTurnEnd,
  type StoredConversationEvent,
} from '../../core/contracts/conversation-events.js';
import type { Logger } from '../../core/contracts/logger.js';

/**
 * One read loop per followed conversation, shared by every client following it in this process: however
 * many streams follow a conversation, it is read once per wake-up and each new page is handed to all of
 * them. Appends in this process wake it at once; appends by another Butler process sharing the database
 * are found by polling, quickly while the conversation is busy, slowly while it is quiet. Events on the
 * LISTEN/NOTIFY bus (a turn started or finished there, an approval decided) wake it and make it busy.
 */

export interface WatchTiming {
  /** Poll interval while a turn runs or the conversation was busy in the last `busyWindowMs`. */
  pollMs: number;
  /** Poll interval otherwise, when the bus tells of other processes' turns; without a bus, `pollMs`. */
  quietPollMs: number;
  busyWindowMs: number;
  pageSize: number;
}

/** Events with ids in (`from`, last id of `events`]: a follower that has read less has a gap to fill. */
export interface WatchPage {
  from: number;
  events: readonly StoredConversationEvent[];
}

export type WatchListener = (page: WatchPage) => void;

export class ConversationWatch {
  private readonly listeners = new Set<WatchListener>();
  /** The highest id read and handed out. */
  private last: number;
  private wakeUp: (() => void) | undefined;
  private wokenWhileReading = false;
  private turnRunning = false;
  private busyUntil = 0;
  private running = false;
  /** A failing read is logged once per run of failures, not at every poll. */
  private failing = false;

  constructor(
    private readonly conversationKey: string,
    startAfter: number,
    private readonly events: ConversationEventRepository,
    private readonly timing: WatchTiming & { quietWhenIdle: boolean },
    private readonly logger: Logger,
    /** Called when the last follower has left and the loop has stopped. */
    private readonly onStopped: () => void,
  ) {
    this.last = startAfter;
  }

  /** The highest event id this watch has handed out (followers that have read less catch up themselves). */
  get tail(): number {
    return this.last;
  }

  /** Starts following; the returned function stops. The first follower starts the loop. */
  add(listener: WatchListener): () => void {
    this.listeners.add(listener);
    if (!this.running) {
      this.running = true;
      void this.run();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.wake();
    };
  }

  /** Something may have been appended (in this process, or another one says so on the bus): read now. */
  wake(signal?: 'busy' | 'turn_started' | 'turn_finished'): void {
    if (signal) this.busyUntil = Date.now() + this.timing.busyWindowMs;
    if (signal === 'turn_started') this.turnRunning = true;
    if (signal === 'turn_finished') this.turnRunning = false;
    if (this.wakeUp) this.wakeUp();
    else this.wokenWhileReading = true;
  }

  private async run(): Promise<void> {
    while (this.listeners.size > 0) {
      await this.readNew();
      if (this.listeners.size === 0) break;
      await this.sleep();
    }
    this.running = false;
    this.onStopped();
  }

  private async readNew(): Promise<void> {
    try {
      for (;;) {
        const page = await this.events.listAfter(this.conversationKey, this.last, this.timing.pageSize);
        if (page.length === 0) break;
        const from = this.last;
        this.last = page.at(-1)?.id ?? this.last;
        this.busyUntil = Date.now() + this.timing.busyWindowMs;
        if (page.some(({ event }) => isTurnEnd(event))) this.turnRunning = false;
        for (const listener of [...this.listeners]) listener({ from, events: page });
        if (page.length < this.timing.pageSize || this.listeners.size === 0) break;
      }
      if (this.failing) this.logger.info({ conversation: this.conversationKey }, 'reading API events again');
      this.failing = false;
    } catch (error) {
      // Followers stay; the next poll tries again.
      if (!this.failing)
        this.logger.warn({ err: error, conversation: this.conversationKey }, 'reading API events failed');
      this.failing = true;
    }
  }

  private sleep(): Promise<void> {
    if (this.wokenWhileReading) {
      this.wokenWhileReading = false;
      return Promise.resolve();
    }
    const { pollMs, quietPollMs, quietWhenIdle } = this.timing;
    const busy = !quietWhenIdle || this.turnRunning || Date.now() < this.busyUntil;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, busy ? pollMs : quietPollMs);
      this.wakeUp = done;
    });
  }
}
