import type { ApprovalService } from '../approvals/approval-service.js';
import type { ConnectionBook } from '../connections/connection-book.js';
import type { TurnEvent } from '../contracts/adapter.js';
import type { ConnectionOwner } from '../contracts/connection-records.js';
import type { ChatUser, ConversationAddress } from '../contracts/events.js';
import type { FileOrigin } from '../contracts/file-records.js';
import type { FileBytes } from '../contracts/files.js';
import type { InputAnswer, InputRequest, InputResponse } from '../contracts/input-needed.js';
import type { Logger } from '../contracts/logger.js';
import type { MessageSearch } from '../contracts/message-search.js';
import type { ToolCall } from '../contracts/messages.js';
import type { StepObserver } from '../contracts/observer.js';
import type { AgentFrame, ApprovedWait, Store } from '../contracts/store.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { ToolSet } from '../tools/registry.js';
import type { Risk, Tool } from '../tools/tool.js';

/**
 * The tool-calls room: what resolving a model step's tool calls needs and produces. Turns (`core/turn`) and
 * sub-agents (`core/agents`) both call it; it calls neither.
 */

export interface ToolResult {
  toolCallId: string;
  content: string;
  /** What is kept of `content` after the turn (`ToolOutput`), when the model alone may read it. */
  kept?: string;
}

export interface ToolScope {
  store: Store;
  tools: ToolSet;
  policy: ApprovalPolicy;
  approvals: ApprovalService;
  conversationKey: string;
  address: ConversationAddress;
  /** The person the turn answered last. */
  requester: ChatUser;
  /** Everyone whose message the turn answered: each is a requester of every call. */
  requesters: readonly ChatUser[];
  /** The platform message the turn answers, when there is one (what a scheduled task replies under). */
  replyTo?: string;
  isDirect: boolean;
  /** The scheduled task whose run made these calls; absent when people's messages did. */
  scheduleId?: string;
  /** The channel profile of the conversation (its tools are the only ones here); absent: the defaults. */
  profile?: string;
  /**
   * Whether the model may have read tool output (or, in a sub-agent, only Butler's words) before these
   * calls: a personal call (a memory) then needs its person's confirmation.
   */
  afterToolOutput: boolean;
  observer: StepObserver;
  logger: Logger;
  signal: AbortSignal;
  /** Runs `delegate` calls; absent where delegation is not allowed (inside a sub-agent). */
  delegation?: Delegation;
  /** The sub-agent whose calls these are; absent for Butler's own. */
  agent?: string;
  /** People's OAuth connections: a call that acts with one waits until it is there. Absent: none configured. */
  connections?: ConnectionBook;
  /** Tells the platform about each call and its result (the HTTP API streams them); never throws. */
  report?: (event: TurnEvent) => Promise<void>;
  /**
   * Stores and sends files a call produced into the conversation, once per call; returns a line per file
   * for the model. Absent where files cannot go anywhere (they are then described, not sent).
   */
  deliverFiles?: (callId: string, files: readonly FileBytes[], origin: FileOrigin) => Promise<string[]>;
  /** The opened platform credential of the one message the turn answers (`ToolContext.grant`). */
  grant?: string;
  /** The conversation's platform search, where it has one. */
  messageSearch?: MessageSearch;
  /** Answers to what servers asked when these calls were made before, by tool call id: they are made again with them. */
  answers?: ReadonlyMap<string, InputAnswer>;
  /** Asks a call's requester what its server asks while it runs; absent where nobody can be asked. */
  ask?: (
    call: { server: string; toolName: string; callId: string },
    request: InputRequest,
    signal: AbortSignal,
  ) => Promise<InputResponse>;
}

/** A validated call that needs a person's decision; `agent` when a sub-agent's run asked for it. */
export interface PendingCall {
  call: ToolCall;
  tool: Tool;
  input: unknown;
  /** The risk it is decided at: the tool's, or medium for a personal call that needs confirmation. */
  risk: Risk;
  /** A personal call: only this person confirms it. */
  confirmBy?: ChatUser;
  agent?: { name: string; delegateCallId: string };
}

/**
 * A sub-agent's run waiting on decisions or a connection: its state, the calls it waits for a card for, and the
 * connection it waits for (its calls that need it are re-resolved once it is made).
 */
export interface ParkedRun {
  frame: AgentFrame;
  pending: PendingCall[];
  need?: ConnectionNeed;
}

export type DelegationOutcome = { status: 'done'; result: ToolResult } | { status: 'parked'; run: ParkedRun };

/** Butler's `delegate` calls in one turn, run by the agents room (`core/agents`). */
export interface Delegation {
  handles(call: ToolCall): boolean;
  /** Runs the calls' sub-agents (in parallel, bounded); one outcome per call, in order. */
  run(scope: ToolScope, calls: readonly ToolCall[]): Promise<DelegationOutcome[]>;
}

/**
 * Calls of a step that wait until `owner` connects `server` (the turn parks; they run as that person then);
 * `scope`: the scopes to authorize, when the server asked for more than the connection holds (a step-up).
 */
export interface ConnectionNeed {
  server: string;
  owner: ConnectionOwner;
  callIds: string[];
  scope?: string;
}

/** A call whose server asks its requester for input first: the turn parks, and the call is made again with the answers. */
export interface InputNeed {
  callId: string;
  server: string;
  toolName: string;
  requests: readonly InputRequest[];
  requestState: string | undefined;
}

export type Resolution =
  | { status: 'complete'; results: ToolResult[] }
  | { status: 'needs_approval'; results: ToolResult[]; pending: PendingCall[]; agents: AgentFrame[] }
  | {
      status: 'needs_connection';
      results: ToolResult[];
      need: ConnectionNeed;
      /** Sub-agent runs that wait with it: for this connection, or for cards asked once it is made. */
      agents: AgentFrame[];
      /** Approved calls that run once it is made. */
      approved: ApprovedWait[];
    }
  | {
      status: 'needs_input';
      results: ToolResult[];
      need: InputNeed;
      /** Sub-agent runs that wait with it. */
      agents: AgentFrame[];
      /** Approved calls that run once it is answered (the one that asked, when it was approved). */
      approved: ApprovedWait[];
    };
