/** The budgets room's door: measuring budgets before a turn, and the card that lets one answer go past. */
export type { Budget, BudgetAction, BudgetLimit, BudgetScope, BudgetSubject, LimitState } from './budget.js';
export { budgetActions, budgetKey, budgetLimits, budgetScopes } from './budget.js';
export { BudgetBook, type BudgetVerdict } from './budget-book.js';
export {
  isOverBudgetApproval,
  overBudgetCall,
  overBudgetEnding,
  overBudgetTool,
  withOverBudgetTool,
} from './override.js';
