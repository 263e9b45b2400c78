import type { TurnBinding } from '../agents/delegator.js';
import type { AgentFrame, ApprovalRecord } from '../contracts/store.js';
import { joinNames } from '../text/index.js';
import type { ParkedRun, ToolResult, ToolScope } from '../tool-calls/index.js';
import type { Turn } from './turn.js';

/** Where a turn meets its sub-agents: what it lends their runs, and their continuation after a card. */

/** What a turn lends the sub-agent runs it starts; progress shows in the reply and the status line. */
export function turnBinding(turn: Turn): TurnBinding {
  return {
    turnId: turn.id,
    observer: turn.observer,
    onDelegating: async (agents) => {
      const names = joinNames(agents);
      await turn.reply.append(`_Asking ${names}…_`);
      turn.reply.endStep();
      turn.working.progress(`is asking ${names}…`);
    },
    addUsage: (usage) => addTokens(turn, usage),
  };
}

/** Tokens another model spent for the turn (a sub-agent, routing): counted as the turn's, at its price. */
export function addTokens(turn: Turn, usage: { promptTokens: number; completionTokens: number }): void {
  turn.usage.promptTokens += usage.promptTokens;
  turn.usage.completionTokens += usage.completionTokens;
}

/**
 * Continues the sub-agent runs that waited (on the batch's decisions, or a connection): their results join
 * `decided`; runs that wait again are returned.
 */
export async function resumeAgents(
  turn: Turn,
  scope: ToolScope,
  frames: readonly AgentFrame[],
  batch: readonly ApprovalRecord[],
  decided: ToolResult[],
): Promise<ParkedRun[]> {
  if (frames.length === 0) return [];
  const { delegator } = turn.profile;
  if (!delegator) {
    for (const frame of frames)
      decided.push({
        toolCallId: frame.delegateCallId,
        content: `Error: agents are no longer configured; nothing the ${frame.agent} agent asked for was run.`,
      });
    return [];
  }
  const parked: ParkedRun[] = [];
  for (const outcome of await delegator.resume(turnBinding(turn), scope, frames, batch)) {
    if (outcome.status === 'done') decided.push(outcome.result);
    else parked.push(outcome.run);
  }
  return parked;
}
