import type { ApprovalCard } from '../approval-card.js';

export type DecisionFailure = 'not_found' | 'not_authorized' | 'already_decided' | 'expired';

/**
 * The answer to a click. On failure `message` is safe to show to the clicker; `card` (when present)
 * is the card's current state, for adapters that redraw it.
 */
export type DecisionResult =
  | { ok: true; card: ApprovalCard }
  | { ok: false; code: DecisionFailure; message: string; card?: ApprovalCard };
