/**
 * A documented platform limit: at most `limit` calls in any `windowMs` (Slack's tiers are "N per minute",
 * Feishu's "N per second" and "N per minute").
 */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * The start times of the calls made within the last window, oldest first. A window of the documented count is
 * the exact budget: a token bucket refilled at N per minute that also holds a burst of B admits N + B calls in
 * some minute, so to stay under a documented "N per minute" it would have to give up either rate or burst.
 * Smoothing is left to the callers' shared cadence (`Lane.shareIntervalMs`).
 */
export class RateWindow {
  readonly rate: RateLimit;
  private readonly starts: number[] = [];

  constructor(rate: RateLimit) {
    this.rate = rate;
  }

  /** Milliseconds until one more call fits; 0 when it fits now. */
  waitMs(now: number): number {
    this.forget(now);
    const oldest = this.starts[0];
    if (this.starts.length < this.rate.limit || oldest === undefined) return 0;
    return oldest + this.rate.windowMs - now;
  }

  take(now: number): void {
    this.starts.push(now);
  }

  /** Calls still counted at `now`. */
  used(now: number): number {
    this.forget(now);
    return this.starts.length;
  }

  private forget(now: number): void {
    const first = this.starts.findIndex((start) => start > now - this.rate.windowMs);
    if (first === -1) this.starts.length = 0;
    else if (first > 0) this.starts.splice(0, first);
  }
}
