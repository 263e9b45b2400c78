import type { EventBus } from '../core/contracts/event-bus.js';
import { noopAgentObserver, type Observer, type TurnObserver } from '../core/contracts/observer.js';
import { graphemePrefix } from '../core/text/index.js';

/** A compaction error is a provider's message: enough of it to tell what went wrong, no more. */
const maxErrorLength = 300;

/**
 * Feeds the event bus from what the core reports to observers: turns starting and finishing, approvals
 * requested, voted on, decided and expired, compactions. Only ids, names and counts are published; generations,
 * tool calls and sub-agent runs (which carry model input and tool arguments) are not events.
 * The bus is shared with the events endpoint and closed by its owner, not here.
 */
export function createEventsObserver(bus: EventBus, now: () => Date = () => new Date()): Observer {
  const at = () => now().toISOString();
  return {
    startTurn(turn) {
      const { turnId, conversationKey } = turn;
      bus.publish({
        type: 'turn_started',
        at: at(),
        conversationKey,
        turnId,
        trigger: turn.trigger,
        platform: turn.platform,
        userId: turn.userId,
      });
      const observer: TurnObserver = {
        generation: () => {},
        toolCall: () => {},
        agent: () => noopAgentObserver,
        approvalRequested(approval) {
          bus.publish({
            type: 'approval_requested',
            at: at(),
            conversationKey: approval.conversationKey,
            approvalId: approval.approvalId,
            toolName: approval.toolName,
            risk: approval.risk,
          });
        },
        compaction(record) {
          bus.publish({
            type: 'compaction',
            at: record.endTime.toISOString(),
            conversationKey,
            tokensBefore: record.tokensBefore,
            tokensAfter: record.tokensAfter,
            messagesFolded: record.messagesFolded,
            ...(record.error === undefined ? {} : { error: graphemePrefix(record.error, maxErrorLength) }),
          });
        },
        end(outcome) {
          bus.publish({ type: 'turn_finished', at: at(), conversationKey, turnId, status: outcome.status });
        },
      };
      return observer;
    },
    approvalDecided(approval) {
      bus.publish({
        type: 'approval_decided',
        at: at(),
        conversationKey: approval.conversationKey,
        approvalId: approval.approvalId,
        toolName: approval.toolName,
        risk: approval.risk,
        decision: approval.decision,
        decidedBy: approval.decidedBy,
      });
    },
    approvalVoted(approval) {
      bus.publish({
        type: 'approval_voted',
        at: at(),
        conversationKey: approval.conversationKey,
        approvalId: approval.approvalId,
        toolName: approval.toolName,
        risk: approval.risk,
        votes: approval.votes,
        quorum: approval.quorum,
        votedBy: approval.votedBy,
      });
    },
    approvalExpired(approval) {
      bus.publish({
        type: 'approval_expired',
        at: at(),
        conversationKey: approval.conversationKey,
        approvalId: approval.approvalId,
        toolName: approval.toolName,
        risk: approval.risk,
      });
    },
    flush: async () => {},
    shutdown: async () => {},
  };
}
