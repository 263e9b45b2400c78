import type { BudgetSubject } from '../budgets/index.js';
import type { Turn, TurnRunnerDeps } from './turn.js';

/** Whose spending the turn adds to: its conversation's place, and the person its usage is charged to. */
export const budgetSubject = (turn: Turn): BudgetSubject => ({
  address: turn.conversation.address,
  conversationKey: turn.conversation.key,
  person: turn.requester,
});

/**
 * The line a card of a turn near a budget adds: where the budget stands and what continuing may cost.
 * Only informative: a failed lookup leaves it out rather than keeping the card from being shown.
 */
export async function budgetCardNote(deps: TurnRunnerDeps, turn: Turn): Promise<string | undefined> {
  if (!deps.budgets) return undefined;
  try {
    return await deps.budgets.cardNote(budgetSubject(turn));
  } catch (error) {
    turn.log.warn({ err: error }, 'could not measure the budgets for the card');
    return undefined;
  }
}
