/**
 * Storage contract of budget notes: the warning that a budget passed one of its `warnAt` fractions is
 * posted once per budget, limit, period and fraction, whichever process and turn gets there first.
 */

export interface BudgetNotice {
  /** The budget's key: `scope:platform:id`. */
  budget: string;
  /** Which of its limits: `tokensPerDay`, `costPerDay` or `costPerMonth`. */
  limit: string;
  /** The UTC day (`2026-05-01`) or calendar month (`2026-05`) the limit counts. */
  period: string;
  /** The `warnAt` fraction passed. */
  threshold: number;
  /** Where the note is posted. */
  conversationKey: string;
}

export interface BudgetRepository {
  /** Records the notice; false when it was already recorded (the note is someone else's to post). */
  claimNotice(notice: BudgetNotice): Promise<boolean>;
  /** Deletes notes recorded before `before`; returns how many. */
  pruneNotices(before: Date): Promise<number>;
}

/**
 * The call a turn over an `approve` budget parks on: not a tool the model is offered, but a high-risk call
 * of Butler's own, so that its card, decision, continuation and audit are those of any other.
 */
export const overBudgetToolName = 'continue_over_budget';
