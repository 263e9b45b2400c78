/** Pace and limits of streamed replies, and whether CardKit is worth trying right now. */

export interface StreamSettings {
  /**
   * CardKit allows 10 operations per second per card, creation and closing included: one update per
   * 120 ms leaves room for those within any one second.
   */
  cardkitIntervalMilliseconds: number;
  /** PATCH allows 5 per second per message but shares app-wide quotas; the fallback stays gentle. */
  patchIntervalMilliseconds: number;
  /** CardKit ends streaming mode after about 10 minutes: continue in a fresh card before that. */
  cardkitRolloverMilliseconds: number;
  /** Rendered markdown per card; cards are capped at 30 KB of JSON. */
  maxCardBytes: number;
  /** Tries at delivering the final text before posting what is missing as new messages. */
  finishAttempts: number;
}

export const defaultStreamSettings: StreamSettings = {
  cardkitIntervalMilliseconds: 120,
  patchIntervalMilliseconds: 1500,
  cardkitRolloverMilliseconds: 9 * 60_000,
  maxCardBytes: 18_000,
  finishAttempts: 4,
};

/** Shared by all streams: once CardKit fails, replies use the fallback for a while instead of failing first. */
export interface CardkitHealth {
  usable(now: number): boolean;
  failed(now: number): void;
}

export function createCardkitHealth(cooldownMilliseconds = 5 * 60_000): CardkitHealth {
  let retryAt = 0;
  return {
    usable: (now) => now >= retryAt,
    failed: (now) => {
      retryAt = now + cooldownMilliseconds;
    },
  };
}
