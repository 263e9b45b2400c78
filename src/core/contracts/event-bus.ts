/**
 * What Butler does, as a live stream shared by every process on the same database (turns, approvals,
 * compaction). Payloads carry ids, names and counts only: never message text, tool arguments or results,
 * so a stream consumer sees what happened without seeing what was said.
 * Delivery is best effort: events published while a process is cut off from the database are lost.
 */
export type ButlerEvent =
  | {
      type: 'turn_started';
      at: string;
      conversationKey: string;
      turnId: string;
      trigger: 'message' | 'resume';
      platform: string;
      userId: string;
    }
  | {
      type: 'turn_finished';
      at: string;
      conversationKey: string;
      turnId: string;
      status: 'replied' | 'parked' | 'failed' | 'stopped';
    }
  | {
      type: 'approval_requested';
      at: string;
      conversationKey: string;
      approvalId: string;
      toolName: string;
      risk: string;
    }
  | {
      type: 'approval_decided';
      at: string;
      conversationKey: string;
      approvalId: string;
      toolName: string;
      risk: string;
      decision: string;
      decidedBy: string;
    }
  | {
      /** An approval counted toward a quorum: the request still waits for `quorum - votes` more. */
      type: 'approval_voted';
      at: string;
      conversationKey: string;
      approvalId: string;
      toolName: string;
      risk: string;
      votes: number;
      quorum: number;
      votedBy: string;
    }
  | {
      type: 'approval_expired';
      at: string;
      conversationKey: string;
      approvalId: string;
      toolName: string;
      risk: string;
    }
  | {
      type: 'compaction';
      at: string;
      conversationKey: string;
      tokensBefore: number;
      tokensAfter: number;
      messagesFolded: number;
      error?: string;
    };

export type ButlerEventType = ButlerEvent['type'];

export interface EventBus {
  /** Fire and forget: never throws, never waits on subscribers. */
  publish(event: ButlerEvent): void;
  /**
   * Every event published by any process sharing the database, from now on. Returns unsubscribe.
   * Listeners run on the bus's delivery path: they must return quickly (queue, don't await); one that
   * throws is logged and the others still receive the event.
   */
  subscribe(listener: (event: ButlerEvent) => void): () => void;
  close(): Promise<void>;
}
