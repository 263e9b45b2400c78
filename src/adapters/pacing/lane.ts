import { type CountedCall, type RateLimit, RateWindow } from './rate-window.js';

/** A call's place in each of its lane's windows, given back once it was answered. */
export type Ticket = readonly CountedCall[];

/**
 * One budget: the calls that count against the same platform limits (a method in a workspace, a card, a
 * channel). Callers wait their turn in order; a rate-limited answer closes the lane for its Retry-After.
 */
export class Lane {
  private readonly windows: RateWindow[];
  private readonly now: () => number;
  private readonly waiting: Array<(ticket: Ticket) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private blockedUntil = 0;
  /** Sharers by id, with when each last asked for its interval. */
  private readonly sharers = new Map<number, number>();
  private nextSharer = 0;

  constructor(limits: readonly RateLimit[], now: () => number) {
    this.windows = limits.map((limit) => new RateWindow(limit));
    this.now = now;
  }

  /** Whether a call could go now: room in every window and nobody waiting before it. */
  free(): boolean {
    return this.waiting.length === 0 && this.waitMs(this.now()) === 0;
  }

  /** Counts a call leaving now (after `free()` said so). */
  takeNow(): Ticket {
    return this.windows.map((window) => window.take());
  }

  /** Resolves once the call may go, in the order callers asked. */
  acquire(): Promise<Ticket> {
    if (this.free()) return Promise.resolve(this.takeNow());
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.wake();
    });
  }

  /** The call was answered (or failed): it counts for a window from now. */
  answered(ticket: Ticket): void {
    const now = this.now();
    for (const call of ticket) call.answeredAt = now;
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
    return Math.max(0, ...this.windows.map(({ rate }) => (sharers * rate.windowMs) / rate.limit));
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

  private waitMs(now: number): number {
    return Math.max(this.blockedUntil - now, 0, ...this.windows.map((window) => window.waitMs(now)));
  }

  private wake(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.now();
    while (this.waiting.length > 0 && this.waitMs(now) === 0) this.waiting.shift()?.(this.takeNow());
    const wait = this.waitMs(now);
    // An infinite wait ends with an answer (`answered` wakes the lane), not with time.
    if (this.waiting.length > 0 && Number.isFinite(wait))
      this.timer = setTimeout(() => this.wake(), Math.max(1, wait));
  }
}
