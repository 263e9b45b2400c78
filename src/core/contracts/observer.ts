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
  /** The scheduled task whose run this turn is; absent when people's messages started it. */
  scheduleId?: string;
  /** The channel profile of its conversation; absent where the defaults apply. */
  profile?: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface GenerationRecord {
  name: 'chat' | 'compaction' | 'routing';
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

/** A server's question to the person who asked for a call (MCP elicitation): ids and names, never values. */
export interface InputQuestionInfo {
  inputId: string;
  conversationKey: string;
  server: string;
  tool: string;
  questions: Array<{ key: string; mode: 'form' | 'url' }>;
}

/** An answer to one question: the action and which fields were filled in, never what they hold. */
export interface InputAnswerInfo {
  inputId: string;
  conversationKey: string;
  server: string;
  tool: string;
  key: string;
  action: 'accept' | 'decline' | 'cancel';
  fields: string[];
  answeredBy: string;
}

/** A person's rating of a turn's reply: a tracer scores the turn's trace with it. */
export interface FeedbackInfo {
  /** Stable per person and turn: a changed rating replaces the score given before. */
  id: string;
  turnId: string;
  conversationKey: string;
  rating: 'positive' | 'negative';
  comment: string | null;
  /** `platform:user id` of who rated. */
  rater: string;
}

/** A sub-agent Butler delegated to within a turn. */
export interface AgentInfo {
  agent: string;
  /** Butler's `delegate` tool call this run answers. */
  delegateCallId: string;
  task: string;
  /** Continuing after an approval decision (the run parked before). */
  resumed: boolean;
}

export interface AgentOutcome {
  status: 'done' | 'parked' | 'failed';
  steps: number;
  usage: TokenUsage;
  /** The result handed back to Butler (done, failed). */
  output?: string;
  error?: string;
}

/** What a model loop reports step by step: Butler's own turn, or a sub-agent inside it. */
export interface StepObserver {
  generation(record: GenerationRecord): void;
  toolCall(record: ToolCallRecord): void;
}

/** A sub-agent's run, nested under its turn: its generations and tool calls are its children. */
export interface AgentObserver extends StepObserver {
  end(outcome: AgentOutcome): void;
}

export interface TurnObserver extends StepObserver {
  approvalRequested(approval: ApprovalRecordInfo): void;
  /** Optional: the turn parked on a server's question. */
  inputAsked?(question: InputQuestionInfo): void;
  compaction(record: CompactionRecord): void;
  /** Starts a sub-agent's span under the turn. */
  agent(info: AgentInfo): AgentObserver;
  end(outcome: { status: 'replied' | 'parked' | 'failed' | 'stopped'; error?: string }): void;
}

export interface Observer {
  startTurn(turn: TurnInfo): TurnObserver;
  approvalDecided(approval: ApprovalRecordInfo & { decision: Decision; decidedBy: string }): void;
  approvalExpired(approval: ApprovalRecordInfo): void;
  /** Optional: an approval counted toward a quorum that still needs more (`votes` of `quorum` given). */
  approvalVoted?(approval: ApprovalRecordInfo & { votes: number; quorum: number; votedBy: string }): void;
  /** Optional: a rating was given or changed (after it is stored). */
  feedbackGiven?(feedback: FeedbackInfo): void;
  /** Optional: a server's question was answered (after the answer is stored). */
  inputAnswered?(answer: InputAnswerInfo): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export const noopAgentObserver: AgentObserver = {
  generation: () => {},
  toolCall: () => {},
  end: () => {},
};

export const noopTurnObserver: TurnObserver = {
  generation: () => {},
  toolCall: () => {},
  approvalRequested: () => {},
  compaction: () => {},
  agent: () => noopAgentObserver,
  end: () => {},
};

export const noopObserver: Observer = {
  startTurn: () => noopTurnObserver,
  approvalDecided: () => {},
  approvalExpired: () => {},
  flush: async () => {},
  shutdown: async () => {},
};
