import { z } from 'zod';
import { budgetActions, budgetKey, budgetScopes } from '../core/budgets/index.js';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { platforms } from '../core/contracts/events.js';
import type { PriceTable } from '../core/usage/pricing.js';

/**
 * `budgets:` in the config file: what a workspace, channel or person may spend on the model per UTC day or
 * calendar month, and what a turn does once it is spent (docs/configuration.md, "Budgets"; docs/policy.md).
 */

const budgetSchema = z
  .object({
    scope: z.enum(budgetScopes),
    platform: z.enum(platforms),
    /** The workspace, channel or user id, as the platform names it. */
    id: z.string().min(1),
    /** How notes and cards name it ("#ops"). */
    name: z.string().trim().min(1).max(80).optional(),
    tokensPerDay: z.number().int().positive().optional(),
    costPerDay: z.number().positive().optional(),
    costPerMonth: z.number().positive().optional(),
    warnAt: z
      .array(z.number().gt(0).lt(1))
      .max(5)
      .default([])
      .refine((fractions) => new Set(fractions).size === fractions.length, 'each fraction once'),
    onExceeded: z.enum(budgetActions).default('stop'),
  })
  .strict()
  .refine(
    (budget) =>
      budget.tokensPerDay !== undefined ||
      budget.costPerDay !== undefined ||
      budget.costPerMonth !== undefined,
    'set tokensPerDay, costPerDay or costPerMonth',
  );

export const budgetsSchema = z
  .array(budgetSchema)
  .default([])
  .superRefine((budgets, context) => {
    const seen = new Set<string>();
    budgets.forEach((budget, index) => {
      const key = budgetKey(budget);
      if (seen.has(key))
        context.addIssue({
          code: 'custom',
          path: [index, 'id'],
          message: `a second budget for ${budget.scope} ${budget.id} on ${budget.platform}: put its limits in one`,
        });
      seen.add(key);
    });
  });

export type BudgetConfig = z.infer<typeof budgetsSchema>[number];

/**
 * Cost limits count priced turns only: each model whose tokens a turn records (Butler's, which prices its
 * sub-agents' tokens too, and the compaction model) needs a price, or the budget would never be reached.
 */
export function unpricedBudgetModels(
  budgets: readonly BudgetConfig[],
  pricing: PriceTable,
  models: readonly (string | undefined)[],
): ConfigIssue[] {
  const index = budgets.findIndex(
    (budget) => budget.costPerDay !== undefined || budget.costPerMonth !== undefined,
  );
  if (index === -1) return [];
  const unpriced = [...new Set(models)].filter(
    (model): model is string => model !== undefined && !Object.hasOwn(pricing, model),
  );
  return unpriced.map((model) => ({
    variable: `config file: budgets.${index}`,
    message: `a cost limit needs a price for the model ${model}: add it under pricing`,
  }));
}

/** An `approve` budget parks turns on a high-risk card: someone on its platform must be able to decide it. */
export function budgetsWithoutApprovers(
  budgets: readonly BudgetConfig[],
  approvers: Readonly<Record<string, readonly string[]>>,
): ConfigIssue[] {
  return budgets.flatMap((budget, index) =>
    budget.onExceeded === 'approve' && (approvers[budget.platform] ?? []).length === 0
      ? [
          {
            variable: `config file: budgets.${index}.onExceeded`,
            message: `approve needs at least one approver on ${budget.platform} (approvers.${budget.platform})`,
          },
        ]
      : [],
  );
}
