import type { Decision } from './events.js';

/**
 * What Butler reports for tracing. The default is a no-op; the Langfuse observer maps a turn to a trace.
 * Records carry their own start/end times so an observer can build spans after the fact.
 * The core calls observers through `guardObserver`: an observer that throws never touches a reply.
 */
export interface TurnInfo {
  turnId: string;
  conversationKey: string;
  platform: string;
  userId: string;
  /** `message` for a new user turn, `resume` for a turn continued after an approval decision. */
  trigger: 'message' | 'resume';
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface GenerationRecord {
  name: 'chat' | 'compaction';
  model: string;
  startTime: Date;
  endTime: Date;
  /** Time of the first streamed token, when there was one. */
  firstTokenTime?: Date;
  input: unknown;
  output: unknown;
  usage?: TokenUsage;
  error?: string;
}

export interface ToolCallRecord {
  toolName: string;
  callId: string;
  risk: string;
  decision: 'auto' | 'approved' | 'granted' | 'rejected' | 'expired' | 'invalid';
  startTime: Date;
  endTime: Date;
  input: unknown;
  output?: string;
  error?: string;
}

export interface CompactionRecord {
  model: string;
  startTime: Date;
  endTime: Date;
  tokensBefore: number;
  tokensAfter: number;
  messagesFolded: number;
  error?: string;
}

export interface ApprovalRecordInfo {
  approvalId: string;
  conversationKey: string;
  toolName: string;
  risk: string;
}

export interface TurnObserver {
  generation(record: GenerationRecord): void;
  toolCall(record: ToolCallRecord): void;
  approvalRequested(approval: ApprovalRecordInfo): void;
  compaction(record: CompactionRecord): void;
  end(outcome: { status: 'replied' | 'parked' | 'failed'; error?: string }): void;
}

export interface Observer {
  startTurn(turn: TurnInfo): TurnObserver;
  approvalDecided(approval: ApprovalRecordInfo & { decision: Decision; decidedBy: string }): void;
  approvalExpired(approval: ApprovalRecordInfo): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const noopTurn: TurnObserver = {
  generation: () => {},
  toolCall: () => {},
  approvalRequested: () => {},
  compaction: () => {},
  end: () => {},
};

export const noopObserver: Observer = {
  startTurn: () => noopTurn,
  approvalDecided: () => {},
  approvalExpired: () => {},
  flush: async () => {},
  shutdown: async () => {},
};
