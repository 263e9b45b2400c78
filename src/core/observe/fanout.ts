import {
  type AgentObserver,
  noopObserver,
  type Observer,
  type StepObserver,
  type TurnObserver,
} from '../contracts/observer.js';

/** Rejects with the first failure once every promise has settled: one slow or failing child never cuts the others short. */
async function settleAll(promises: Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(promises);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}

function stepFanout(observers: StepObserver[]): StepObserver {
  return {
    generation: (record) => {
      for (const observer of observers) observer.generation(record);
    },
    toolCall: (record) => {
      for (const observer of observers) observer.toolCall(record);
    },
  };
}

function agentFanout(observers: AgentObserver[]): AgentObserver {
  return {
    ...stepFanout(observers),
    end: (outcome) => {
      for (const observer of observers) observer.end(outcome);
    },
  };
}

function turnFanout(observers: TurnObserver[]): TurnObserver {
  return {
    ...stepFanout(observers),
    approvalRequested: (approval) => {
      for (const observer of observers) observer.approvalRequested(approval);
    },
    inputAsked: (question) => {
      for (const observer of observers) observer.inputAsked?.(question);
    },
    compaction: (record) => {
      for (const observer of observers) observer.compaction(record);
    },
    agent: (info) => agentFanout(observers.map((observer) => observer.agent(info))),
    end: (outcome) => {
      for (const observer of observers) observer.end(outcome);
    },
  };
}

/**
 * One observer that reports to several (Langfuse tracing and the event stream). Pass each one wrapped in
 * `guardObserver`: then a child that throws is logged by its own guard and the others still hear every call.
 */
export function combineObservers(...observers: Observer[]): Observer {
  const active = observers.filter((observer) => observer !== noopObserver);
  if (active.length === 0) return noopObserver;
  if (active.length === 1 && active[0]) return active[0];
  return {
    startTurn: (turn) => turnFanout(active.map((observer) => observer.startTurn(turn))),
    approvalDecided: (approval) => {
      for (const observer of active) observer.approvalDecided(approval);
    },
    approvalExpired: (approval) => {
      for (const observer of active) observer.approvalExpired(approval);
    },
    approvalVoted: (approval) => {
      for (const observer of active) observer.approvalVoted?.(approval);
    },
    feedbackGiven: (feedback) => {
      for (const observer of active) observer.feedbackGiven?.(feedback);
    },
    inputAnswered: (answer) => {
      for (const observer of active) observer.inputAnswered?.(answer);
    },
    flush: () => settleAll(active.map((observer) => observer.flush())),
    shutdown: () => settleAll(active.map((observer) => observer.shutdown())),
  };
}
