/**
 * A documented platform limit: at most `limit` calls in any `windowMs` (Slack's tiers are "N per minute",
 * Feishu's "N per second" and "N per minute").
 */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** One call as a window counts it: from when it leaves until a window after it was answered. */
export interface CountedCall {
  answeredAt: number | undefined;
}

/**
 * The calls counted against one limit. A window of the documented count is the exact budget: a token bucket
 * refilled at N per minute that also holds a burst of B admits N + B calls in some minute, so to stay under a
 * documented "N per minute" it would have to give up either rate or burst. Smoothing is left to the callers'
 * shared cadence (`Lane.shareIntervalMs`). A call counts until a window after its answer, not its start: the
 * platform counts it when it arrives, which is somewhere in between.
 */
export class RateWindow {
  readonly rate: RateLimit;
  private calls: CountedCall[] = [];

  constructor(rate: RateLimit) {
    this.rate = rate;
  }

  /** This process's part of a limit: `share` of it, rounded down, but never nothing. */
  static scaled(limit: number, share: number): number {
    return Math.max(1, Math.floor(limit * Math.min(1, share)));
  }

  /**
   * Milliseconds until one more call fits in this process's `share` of the limit: 0 when it fits now, Infinity
   * until a call in flight is answered.
   */
  waitMs(now: number, share = 1): number {
    this.forget(now);
    const limit = RateWindow.scaled(this.rate.limit, share);
    if (this.calls.length < limit) return 0;
    // The call that frees the room is the (length − limit + 1)-th to leave the window.
    const answered = this.calls
      .map((call) => call.answeredAt)
      .filter((at): at is number => at !== undefined)
      .sort((left, right) => left - right);
    const freeing = answered[this.calls.length - limit];
    return freeing === undefined ? Number.POSITIVE_INFINITY : freeing + this.rate.windowMs - now;
  }

  take(): CountedCall {
    const call: CountedCall = { answeredAt: undefined };
    this.calls.push(call);
    return call;
  }

  /** Stops counting `call` (taken but never sent). */
  forgetCall(call: CountedCall): void {
    this.calls = this.calls.filter((counted) => counted !== call);
  }

  /** Calls still counted at `now`. */
  used(now: number): number {
    this.forget(now);
    return this.calls.length;
  }

  private forget(now: number): void {
    const horizon = now - this.rate.windowMs;
    if (this.calls.some((call) => call.answeredAt !== undefined && call.answeredAt <= horizon))
      this.calls = this.calls.filter((call) => call.answeredAt === undefined || call.answeredAt > horizon);
  }
}
