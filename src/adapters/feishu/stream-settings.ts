import { cardBodyBudgetBytes, maxTablesPerCard } from './card-limits.js';

/** Pace and limits of streamed replies. */

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
  /** Largest request body a reply card may take (`cardBodyBytes`); the reply continues in a new card past it. */
  maxCardBodyBytes: number;
  /** Tables per card; the reply continues in a new card before one more. */
  maxTablesPerCard: number;
  /** Tries at delivering the final text before posting what is missing as new messages. */
  finishAttempts: number;
}

export const defaultStreamSettings: StreamSettings = {
  cardkitIntervalMilliseconds: 120,
  patchIntervalMilliseconds: 1500,
  cardkitRolloverMilliseconds: 9 * 60_000,
  maxCardBodyBytes: cardBodyBudgetBytes,
  maxTablesPerCard,
  finishAttempts: 4,
};
