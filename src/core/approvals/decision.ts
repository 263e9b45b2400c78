import type { ApprovalCard } from '../contracts/approval-card.js';

export type DecisionFailure = 'not_found' | 'not_authorized' | 'already_decided' | 'expired';

/**
 * The answer to a click. On failure `message` is safe to show to the clicker; `card` (when present)
 * is the card's current state, for adapters that redraw it.
 */
export type DecisionResult =
  /** `message`: what the clicker should know when "Approve all" could not decide every call. */
  | { ok: true; card: ApprovalCard; message?: string }
  | { ok: false; code: DecisionFailure; message: string; card?: ApprovalCard };
