import { type CountedCall, type RateLimit, RateWindow } from './rate-window.js';

/** A call's place in each of its lane's windows, given back once it was answered. */
export type Ticket = readonly CountedCall[];

/**
 * Who goes first when a lane is full: the reply a person waits for, then routine work (card redraws,
 * reminders, App Home), then cosmetic calls (statuses, reactions), which are coalesced or dropped rather
 * than queued (coalescer.ts).
 */
export type Priority = 'reply' | 'routine' | 'cosmetic';
const rank: Readonly<Record<Priority, number>> = { reply: 0, routine: 1, cosmetic: 2 };

interface Waiter {
  rank: number;
  resolve(ticket: Ticket): void;
}

/** Thrown to a caller whose wait was given up (its signal aborted) before the lane had room. */
export class WaitAbandoned extends Error {
  constructor() {
    super('wait for a rate-limited lane abandoned');
    this.name = 'WaitAbandoned';
  }
}

/**
 * One budget: the calls that count against the same platform limits (a method in a workspace, a card, a
 * channel). Callers wait their turn by priority, then in order; a rate-limited answer closes the lane for its
 * Retry-After. `share` is this process's part of each limit (every process serving the workspace paces to
 * its part, so together they stay inside the platform's count).
 */
export class Lane {
  private readonly windows: RateWindow[];
  private readonly now: () => number;
  private readonly share: () => number;
  private readonly waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private blockedUntil = 0;
  /** Sharers by id, with when each last asked for its interval. */
  private readonly sharers = new Map<number, number>();
  private nextSharer = 0;

  constructor(limits: readonly RateLimit[], now: () => number, share: () => number = () => 1) {
    this.windows = limits.map((limit) => new RateWindow(limit));
    this.now = now;
    this.share = share;
  }

  /** Whether a call could go now: room in every window and nobody waiting before it. */
  free(): boolean {
    return this.waiting.length === 0 && this.waitMs(this.now()) === 0;
  }

  /** Counts a call leaving now (after `free()` said so). */
  takeNow(): Ticket {
    return this.windows.map((window) => window.take());
  }

  /**
   * Resolves once the call may go: before every waiter of a lower priority, after those of its own. Rejects
   * with WaitAbandoned when `signal` aborts first (the call then counts nowhere).
   */
  acquire(priority: Priority = 'reply', signal?: AbortSignal): Promise<Ticket> {
    if (signal?.aborted) return Promise.reject(new WaitAbandoned());
    if (this.waitingBefore(rank[priority]) === 0 && this.waitMs(this.now()) === 0)
      return Promise.resolve(this.takeNow());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { rank: rank[priority], resolve };
      const at = this.waitingBefore(waiter.rank + 1);
      this.waiting.splice(at, 0, waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const index = this.waiting.indexOf(waiter);
          if (index === -1) return;
          this.waiting.splice(index, 1);
          reject(new WaitAbandoned());
          this.wake();
        },
        { once: true },
      );
      this.wake();
    });
  }

  /** The call was answered (or failed): it counts for a window from now. */
  answered(ticket: Ticket): void {
    const now = this.now();
    for (const call of ticket) call.answeredAt = now;
    this.wake();
  }

  /** A ticket taken but never used (a reserved call that was not needed): it stops counting at once. */
  release(ticket: Ticket): void {
    this.windows.forEach((window, index) => {
      const call = ticket[index];
      if (call) window.forgetCall(call);
    });
    this.wake();
  }

  /** The platform said "too many": nothing on this lane goes before `ms` from now. */
  backOff(ms: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, this.now() + ms);
    this.wake();
  }

  /** Registers a caller that calls repeatedly (a streaming reply): the lane's budget is split between them. */
  join(): number {
    this.nextSharer += 1;
    this.sharers.set(this.nextSharer, this.now());
    return this.nextSharer;
  }

  leave(sharer: number): void {
    this.sharers.delete(sharer);
  }

  /**
   * How far apart `sharer`'s calls must be for all sharers together to stay inside every limit. Asking marks
   * the sharer active; one silent for a whole window (a reply whose turn died without finishing) stops counting.
   */
  shareIntervalMs(sharer: number): number {
    const now = this.now();
    this.sharers.set(sharer, now);
    const longest = Math.max(0, ...this.windows.map(({ rate }) => rate.windowMs));
    for (const [id, seen] of this.sharers) if (seen < now - longest) this.sharers.delete(id);
    const sharers = this.sharers.size;
    const share = this.share();
    return Math.max(
      0,
      ...this.windows.map(({ rate }) => (sharers * rate.windowMs) / RateWindow.scaled(rate.limit, share)),
    );
  }

  /** Nothing counted, nobody waiting or sharing, not blocked: the lane can be forgotten. */
  idle(): boolean {
    const now = this.now();
    return (
      this.waiting.length === 0 &&
      this.sharers.size === 0 &&
      this.blockedUntil <= now &&
      this.windows.every((window) => window.used(now) === 0)
    );
  }

  /** How many waiters rank before `rankLimit` (the queue is sorted by rank, then arrival). */
  private waitingBefore(rankLimit: number): number {
    let count = 0;
    while (count < this.waiting.length && (this.waiting[count]?.rank ?? rankLimit) < rankLimit) count++;
    return count;
  }

  private waitMs(now: number): number {
    const share = this.share();
    return Math.max(this.blockedUntil - now, 0, ...this.windows.map((window) => window.waitMs(now, share)));
  }

  private wake(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.now();
    while (this.waiting.length > 0 && this.waitMs(now) === 0) this.waiting.shift()?.resolve(this.takeNow());
    const wait = this.waitMs(now);
    // An infinite wait ends with an answer (`answered` wakes the lane), not with time.
    if (this.waiting.length > 0 && Number.isFinite(wait))
      this.timer = setTimeout(() => this.wake(), Math.max(1, wait));
  }
}
