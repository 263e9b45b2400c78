import {
  isOverBudgetApproval,
  overBudgetCall,
  overBudgetEnding,
  overBudgetTool,
  withOverBudgetTool,
} from '../budgets/index.js';
import type { ConversationMessage } from '../contracts/messages.js';
import type { ApprovalRecord } from '../contracts/store.js';
import { approvedCall, resolveApprovedCall, type ToolScope } from '../tool-calls/index.js';
import { budgetSubject } from './budget-note.js';
import type { Turn, TurnRunnerDeps } from './turn.js';
import { completeTurn, parkTurn } from './turn-endings.js';

/**
 * Where a turn meets its budgets: before its first model call (a continuation's too), and when an
 * approver decided whether a turn over one goes on.
 */

/**
 * Checks the turn's budgets before it calls the model: posts the warnings it is the first to cross, and
 * ends it when one is spent (answering, or parking on an approver's card). True when it ended.
 */
export async function endedByBudget(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
): Promise<boolean> {
  const { budgets } = deps;
  if (!budgets || turn.overBudget) return false;
  const verdict = await budgets.check(budgetSubject(turn));
  if (verdict.action === 'go') {
    for (const note of verdict.notes)
      await turn.adapter
        .postNotice(turn.target, note)
        .catch((error: unknown) => turn.log.warn({ err: error }, 'could not post the budget warning'));
    return false;
  }
  if (verdict.action === 'stop') {
    turn.log.info('budget spent: answered without the model');
    await turn.reply.append(verdict.message);
    await completeTurn(deps, turn, pending, verdict.message);
    return true;
  }
  const { call, input } = overBudgetCall(verdict.exceeded);
  await parkTurn(
    deps,
    turn,
    pending,
    { content: '', toolCalls: [call] },
    {
      status: 'needs_approval',
      results: [],
      pending: [{ call, tool: overBudgetTool, input, risk: 'high' }],
      agents: [],
    },
  );
  return true;
}

/** Whether the decided card is a turn's override of its budgets (its continuation is decided here). */
export const isBudgetOverride = (batch: readonly ApprovalRecord[]) =>
  batch.length === 1 && batch.every(isOverBudgetApproval);

/**
 * The continuation of a turn that waited on an override: audited like any decided call; approved, the
 * answer goes on (true); rejected or expired, the turn ends saying so.
 */
export async function overrideDecided(
  deps: TurnRunnerDeps,
  turn: Turn,
  scope: ToolScope,
  approval: ApprovalRecord,
): Promise<boolean> {
  const call = approvedCall(approval, approval.resume.assistant);
  await resolveApprovedCall({ ...scope, tools: withOverBudgetTool(scope.tools) }, approval, call);
  if (approval.status === 'approved') {
    turn.overBudget = true;
    return true;
  }
  const message = overBudgetEnding(approval);
  await turn.reply.append(message);
  await completeTurn(deps, turn, [], message);
  return false;
}
