import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { overBudgetToolName } from '../contracts/budget-records.js';
import type { ToolCall } from '../contracts/messages.js';
import type { ApprovalRecord } from '../contracts/store.js';
import { defineTool } from '../tools/define-tool.js';
import type { ToolSet } from '../tools/registry.js';
import { amount, capitalized, type LimitState, limitWords } from './budget.js';

/**
 * Going on past a spent `approve` budget. The turn parks on one high-risk call of `continue_over_budget`
 * that says which budgets are spent; an approver's "approve" lets this answer (and its continuations) go
 * on, and changes nothing for later turns.
 */

const spentBudget = z
  .object({
    budget: z.string(),
    name: z.string(),
    limit: z.string(),
    used: z.string(),
  })
  .strict();

const overrideInput = z.object({ exceeded: z.array(spentBudget).min(1) }).strict();
type OverrideInput = z.output<typeof overrideInput>;

const spentWords = (input: OverrideInput) =>
  input.exceeded.map((spent) => `${capitalized(spent.name)} has used ${spent.limit}`).join('; ');

export const overBudgetTool = defineTool({
  name: overBudgetToolName,
  description: 'Continue an answer past a spent budget (asked by Butler itself, never by the model).',
  schema: overrideInput,
  risk: 'high',
  summarize: (input) => `${spentWords(input)}; approve to continue this answer.`,
  execute: async () => 'Approved: this answer goes on past its budget.',
});

/** The parked call for `exceeded`, as a model step would have asked for it. */
export function overBudgetCall(exceeded: readonly LimitState[]): {
  call: ToolCall;
  input: OverrideInput;
} {
  const input: OverrideInput = {
    exceeded: exceeded.map((state) => ({
      budget: state.key,
      name: state.label,
      limit: limitWords(state),
      used: amount(state.limit, state.used),
    })),
  };
  return {
    call: { id: `budget_${randomUUID()}`, name: overBudgetToolName, arguments: JSON.stringify(input) },
    input,
  };
}

export const isOverBudgetApproval = (approval: Pick<ApprovalRecord, 'toolName'>) =>
  approval.toolName === overBudgetToolName;

/** `tools` and the override call, which is never offered to the model: what a decided override runs with. */
export function withOverBudgetTool(tools: ToolSet): ToolSet {
  return {
    get: (name) => (name === overBudgetToolName ? overBudgetTool : tools.get(name)),
    names: () => tools.names(),
    definitions: () => tools.definitions(),
    settled: () => tools.settled(),
  };
}

/** The answer of a turn whose override was rejected or expired. */
export function overBudgetEnding(approval: ApprovalRecord): string {
  const parsed = overrideInput.safeParse(approval.arguments);
  const spent = parsed.success ? spentWords(parsed.data) : 'A budget is spent';
  if (approval.status === 'rejected') {
    const who = approval.decidedBy?.name ?? approval.decidedBy?.id ?? 'an approver';
    const reason = approval.reason ? ` ("${approval.reason}")` : '';
    return `I stopped here. ${spent}, and ${who} did not approve going on${reason}.`;
  }
  return `I stopped here. ${spent}, and nobody approved going on before the request expired.`;
}
