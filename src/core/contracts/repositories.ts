import type { ApprovalStatus } from './approval-card.js';
import type { ChatUser, ConversationAddress, InboundMessage, Person, Platform } from './events.js';
import type { ConversationMessage, StoredMessage, ToolCall } from './messages.js';
import type { Identity } from './people.js';
import type { Risk, ToolOrigin } from './tool-facts.js';

/**
 * The repositories of what the core records: the inbox, conversations, approvals, grants, audit and
 * memories (`store.ts` gathers them, with those of `store-records.ts` and `read-models.ts`, into `Store`).
 */

// ── inbox ────────────────────────────────────────────────────────────────────────────────────────

/**
 * Work for the worker: a user message, or a card whose every call was decided (or expired). Resume events
 * stored before batches carry the approval's id, which is also its batch's.
 */
export type InboxPayload =
  | InboundMessage
  | { kind: 'resume'; batchId: string; approvalId?: undefined }
  | { kind: 'resume'; approvalId: string; batchId?: undefined }
  /** A turn parked until someone connected an account goes on: they connected, or the wait expired. */
  | { kind: 'connected'; waitId: string }
  /** A turn parked on a server's question goes on: its requester answered, or the wait expired. */
  | { kind: 'input'; waitId: string }
  /** A waiting request's reminder or escalation: its card sent to people directly, once. */
  | { kind: 'notify'; batchId: string; stage: ApprovalNoticeCard['stage'] };

export interface NewInboxEvent {
  platform: Platform;
  dedupKey: string;
  conversationKey: string;
  payload: InboxPayload;
  /** The platform user behind the event. */
  userId: string;
  /**
   * The person behind a message (`People.keyOf`): rate limits count a person's messages however many identities
   * they write from. Absent: the identity's key, `<platform>:<userId>` (events that are not messages).
   */
  senderKey?: string;
}

export interface InboxEvent extends NewInboxEvent {
  id: number;
  attempts: number;
  createdAt: Date;
  /**
   * For a message: its rank among the messages its sender sent in the minute up to it, itself included,
   * counted across processes when it was claimed (rate limiting). 0 for other events.
   */
  senderRank: number;
}

export type InboxOutcome = 'done' | 'rate_limited' | 'failed';

/** What waits in the inbox across every process sharing the database (metrics). */
export interface InboxBacklog {
  /** Events not finished yet: pending, or claimed by a worker. */
  open: number;
  /** How long the oldest of them has been in the inbox, by the database's clock; 0 when none is open. */
  oldestAgeSeconds: number;
}

/** The pending events of one conversation, claimed together under a lease on the conversation. */
export interface ClaimedBatch {
  conversationKey: string;
  events: InboxEvent[];
  /** Whether other conversations had work waiting when this one was claimed. */
  more: boolean;
}

/** The slots of models capped by `model.maxConcurrent`, shared by every process of the database. */
export interface ModelSlotRepository {
  /** Takes a free slot of `model` (of `cap`) for `holder`; undefined when every slot is held. */
  take(model: string, cap: number, holder: string, leaseMs: number): Promise<number | undefined>;
  /** Extends every slot `holder` holds. */
  renew(holder: string, leaseMs: number): Promise<void>;
  release(model: string, slot: number, holder: string): Promise<void>;
}

export interface InboxRepository {
  /** Inserts unless (platform, dedupKey) exists. Returns the new id, or undefined for a duplicate. */
  insert(event: NewInboxEvent): Promise<number | undefined>;
  /**
   * Claims every pending event of the oldest conversation nobody holds, taking a lease on it.
   * Events of a conversation whose lease expired (its worker died) are claimed again. `release`: a
   * conversation this owner is done with, whose lease the same statement gives up (saves a round trip).
   * `platforms`: only conversations of these (the ones this process has adapters for); default all.
   */
  claimNext(
    owner: string,
    leaseMs: number,
    release?: string,
    platforms?: readonly Platform[],
  ): Promise<ClaimedBatch | undefined>;
  /**
   * Renews, in one statement, every lease `owner` still holds among `conversationKeys`; returns those. A lease
   * that lapsed is not renewed, even if nobody took it yet.
   */
  renewLeases(owner: string, conversationKeys: readonly string[], leaseMs: number): Promise<string[]>;
  releaseLease(conversationKey: string, owner: string): Promise<void>;
  /**
   * Makes pending again the claimed events of conversations nobody holds a live lease on (their process died,
   * stalled past its lease, or stopped mid-turn); returns how many. Claims take only pending events.
   */
  reopenLapsed(): Promise<number>;
  finish(eventIds: readonly number[], outcome: InboxOutcome, error?: string): Promise<void>;
  /** Deletes up to `limit` of the oldest events that finished before `before`; returns how many. */
  pruneFinished(before: Date, limit: number): Promise<number>;
  /** Frees leases held by owners that cannot be alive (embedded database: a single process). */
  releaseAllLeases(): Promise<void>;
  backlog(): Promise<InboxBacklog>;
  /** Whether an event with this dedup key was already taken (an API message's Idempotency-Key). */
  exists(platform: Platform, dedupKey: string): Promise<boolean>;
  /** Messages `userId` of `platform` sent since `since` (what the per-minute rate limit counts). */
  /** Messages of the person with this key since `since`, through any of their identities. */
  messagesSince(senderKey: string, since: Date): Promise<number>;
}

// ── conversations and messages ──────────────────────────────────────────────────────────────────

/** Crash-recovery record of the turn in progress, kept on the conversation until the turn commits. */
export interface InflightTurn {
  turnId: string;
  eventIds: number[];
  /** Platform messages of the reply posted so far. */
  replyMessageIds: string[];
  /** Set once the reply was delivered in full: the messages that the turn will persist. */
  delivered?: { text: string; messages: ConversationMessage[] };
}

export interface ConversationRecord {
  id: string;
  key: string;
  address: ConversationAddress;
  summary: string | null;
  summaryTokens: number;
  lastCompactedAt: Date | null;
  /** Ratio of the model's reported prompt tokens to our offline estimate (≈1). */
  tokenScale: number;
  promptTokensTotal: number;
  completionTokensTotal: number;
  compactionRetryAt: Date | null;
  inflight: InflightTurn | null;
}

export interface CompactionResult {
  summary: string;
  summaryTokens: number;
  /** Every non-compacted message with id <= this is folded into the summary. */
  foldedThroughId: number;
  messagesFolded: number;
  tokensBefore: number;
  tokensAfter: number;
  model: string;
  durationMs: number;
}

export interface ConversationRepository {
  find(key: string): Promise<ConversationRecord | undefined>;
  /** Returns the conversation, creating it on first sight. */
  ensure(key: string, address: ConversationAddress): Promise<ConversationRecord>;
  /** The messages not yet folded into the summary, oldest first. */
  window(conversationId: string): Promise<StoredMessage[]>;
  /** Adds messages (a turn's own go in with its commit: `TurnRepository.commit`). */
  append(
    conversationId: string,
    messages: ReadonlyArray<ConversationMessage & { tokens: number }>,
  ): Promise<void>;
  applyCompaction(conversationId: string, result: CompactionResult): Promise<void>;
  deferCompaction(conversationId: string, until: Date): Promise<void>;
  /** Records what the turn in progress has posted (crash recovery). */
  setInflight(conversationId: string, inflight: InflightTurn): Promise<void>;
  /**
   * Platform messages Butler is known to have shown in the conversation lately: recent replies and
   * approval cards (crash recovery: anything else of Butler's there was left by an interrupted attempt).
   */
  knownPlatformMessages(conversation: Pick<ConversationRecord, 'id' | 'key'>): Promise<string[]>;
}

// ── approvals ───────────────────────────────────────────────────────────────────────────────────

/**
 * Everything needed to continue a parked turn after its card was decided, even in another process. Every
 * approval of a batch carries the same state.
 */
export interface ResumeState {
  turnId: string;
  /** The assistant message whose tool calls are being resolved. */
  assistant: { content: string; toolCalls: ToolCall[] };
  /** Results of the calls that needed no decision (ran, refused, or ran under a standing approval). */
  results: Array<{ toolCallId: string; content: string }>;
  /**
   * Written before batches: the one call the approval was for; calls after it were not looked at yet
   * and are resolved when the turn continues.
   */
  pendingIndex?: number;
  /** The user message the turn answered (reply anchor for the continuation). */
  replyTo?: string;
  /** Platform messages of the reply shown before the turn parked. */
  replyMessageIds?: string[];
  /** Whether the conversation is a direct message (for the continuation's system prompt). */
  isDirect?: boolean;
  /** The scheduled task whose run parked here (the continuation is still that run, for audit and traces). */
  scheduleId?: string;
  /**
   * Sub-agents whose runs wait on this card (or connection), each answering one of `assistant`'s `delegate`
   * calls.
   */
  agents?: AgentFrame[];
  /** Calls approved before the turn parked for a connection they act with: they run once it is made. */
  approved?: ApprovedWait[];
  /** An approver let this answer go on past a spent budget: its continuation is not checked again. */
  overBudget?: boolean;
}

/**
 * A sub-agent's run parked on an approval: enough to continue it after the decision, in any process. Its
 * system prompt is rebuilt from the configuration; everything it said and was told so far is here.
 */
export interface AgentFrame {
  agent: string;
  /** Butler's `delegate` call that this run answers. */
  delegateCallId: string;
  task: string;
  /** The run's messages before the step that waits (the task first). */
  messages: ConversationMessage[];
  /** The step whose calls wait. */
  assistant: { content: string; toolCalls: ToolCall[] };
  /** Results of that step's calls that needed no decision. */
  results: Array<{ toolCallId: string; content: string }>;
  /** Model calls made so far (the step budget spans the park). */
  steps: number;
  /** The step's calls approved before the run parked for a connection they act with. */
  approved?: ApprovedWait[];
}

/** An approved call that waits for a connection before it runs (once, with no second card). */
export interface ApprovedWait {
  toolCallId: string;
  approvalId: string;
}

export interface NewApproval {
  /** The calls of one model step that wait on one card share it. */
  batchId: string;
  conversationKey: string;
  platform: Platform;
  toolName: string;
  origin?: ToolOrigin;
  /** A sub-agent's call: which agent, and the `delegate` call (in `resume.agents`) whose run asked. */
  agent?: { name: string; delegateCallId: string };
  toolCallId: string;
  arguments: unknown;
  risk: Risk;
  summary: string;
  /** The person whose message the turn answered last (the reply goes to them). */
  requestedBy: ChatUser;
  /** Everyone whose message the turn answered, on the approval's platform: each counts as a requester. */
  requesters: ChatUser[];
  /** A personal call (a memory saved for someone): only this person may decide it. */
  confirmBy?: ChatUser;
  /** The configured approvers when it was asked, for the record; decisions check the list in force. */
  approverIds: string[];
  /** Distinct approvers whose approval it needs (`approvalPolicy.quorum`); default 1. */
  quorum?: number;
  expiresAt: Date;
  resume: ResumeState;
}

/** One approval of a call that needs several: who, when, and whether they approved it for the conversation. */
export interface ApprovalVote extends Person {
  at: string;
  standing?: boolean;
}

/** A copy of a request's card sent to someone directly (a reminder, an escalation): decidable there too. */
export interface ApprovalNoticeCard {
  stage: 'reminder' | 'escalation';
  person: Person;
  /** The direct chat's conversation key, and the platform message showing the card there. */
  conversationKey: string;
  messageId: string;
  at: string;
}

export type ExecutionState = 'running' | 'succeeded' | 'failed' | 'skipped';

export interface ApprovalRecord extends NewApproval {
  id: string;
  status: ApprovalStatus;
  decidedBy: Person | null;
  decidedAt: Date | null;
  reason: string | null;
  /** Approved for the conversation: the standing approval it granted lasts until then. */
  standingUntil: Date | null;
  cardMessageId: string | null;
  quorum: number;
  votes: ApprovalVote[];
  remindedAt: Date | null;
  escalatedAt: Date | null;
  /** Since when it waits for Butler to be back in its workspace: nobody decides it meanwhile. */
  pausedAt: Date | null;
  noticeCards: ApprovalNoticeCard[];
  execution: ExecutionState | null;
  /** The tool's output (or error text) once it ran: what the model is given. */
  result: string | null;
  createdAt: Date;
}

export interface ApprovalRepository {
  create(approval: NewApproval): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** The approvals of a batch (a batch id of a row stored before batches is that row's id). */
  listBatch(batchId: string): Promise<ApprovalRecord[]>;
  /**
   * Serialises decisions on one batch until the transaction ends, so that exactly one of two concurrent
   * decisions sees the batch complete. Call it in a transaction.
   */
  lockBatch(batchId: string): Promise<void>;
  setCardMessage(batchId: string, messageId: string): Promise<void>;
  /**
   * Adds one person's approval to a pending, unexpired call that needs several; undefined when it was not
   * pending or they had approved it already through any of `identities` (every identity of the person voting:
   * each person counts once).
   */
  vote(id: string, vote: ApprovalVote, identities: readonly Identity[]): Promise<ApprovalRecord | undefined>;
  /** Decides a pending, unexpired approval; undefined when it was not pending (someone else won). */
  decide(
    id: string,
    decision: {
      status: 'approved' | 'rejected';
      decidedBy: Person;
      reason: string | null;
      at: Date;
      standingUntil?: Date;
    },
  ): Promise<ApprovalRecord | undefined>;
  /**
   * Marks pending approvals past their deadline as expired (or, with `as: 'rejected'`, rejected with
   * `reason`) and returns them.
   */
  expireDue(now: Date, as?: { status: 'rejected'; reason: string }): Promise<ApprovalRecord[]>;
  /**
   * Claims, once across processes, the reminder (or escalation) of every waiting request whose card was
   * posted (or that came back from a pause) at or before `postedBefore`: returns the batches claimed (each stage
   * is claimed once per batch).
   */
  claimNotices(stage: ApprovalNoticeCard['stage'], postedBefore: Date): Promise<string[]>;
  /** Records a copy of a batch's card sent to someone directly. */
  addNoticeCard(batchId: string, notice: ApprovalNoticeCard): Promise<void>;
  /** Claims the one execution of an approved call; false if it was already claimed. */
  beginExecution(id: string): Promise<boolean>;
  /** A begun call that did not run after all (it needs a connection first): it may begin once more later. */
  releaseExecution(id: string): Promise<void>;
  finishExecution(id: string, state: Exclude<ExecutionState, 'running'>, result: string): Promise<void>;
  /** Pending approvals created before `before` whose card was never posted (a crash in between). */
  listWithoutCard(before: Date): Promise<ApprovalRecord[]>;
  /** Approvals still waiting for a decision (past their deadline too, until the sweep expires them). */
  countPending(): Promise<number>;
  /**
   * Butler left the workspace of the conversations whose key starts with `keyPrefix`: their pending approvals
   * neither expire nor remind until `resumeWhere`, which gives each the time it had left. Both return how many.
   */
  pauseWhere(keyPrefix: string): Promise<number>;
  resumeWhere(keyPrefix: string): Promise<number>;
}

// ── audit and memories ──────────────────────────────────────────────────────────────────────────

export interface AuditEntry {
  conversationKey: string;
  approvalId: string | null;
  /** The standing approval a call ran under, without a card. */
  grantId?: string | null;
  /** The sub-agent that made the call. */
  agent?: string | null;
  /** The scheduled task whose run made the call (a schedule asked, not a person's message). */
  scheduleId?: string | null;
  /** The channel profile of the conversation the call was made in. */
  profile?: string | null;
  toolName: string;
  toolCallId: string;
  arguments: unknown;
  risk: Risk | 'unknown';
  /**
   * How the call came to run or not; `answered`: not a run but an answer to what its server asked (the action and
   * the names of the fields filled in, in `arguments`; never their values).
   */
  decision: 'auto' | 'approved' | 'granted' | 'rejected' | 'expired' | 'invalid' | 'answered';
  outcome: 'succeeded' | 'failed' | 'not_run';
  /** The person the turn answered last; `requesters` has everyone it answered. */
  actor: string;
  requesters: string[];
  decidedBy: string | null;
  error: string | null;
  durationMs: number;
}

export interface AuditRepository {
  record(entry: AuditEntry): Promise<void>;
}

/** A standing approval: every call of one tool in one conversation may run without a card until it ends. */
export interface ApprovalGrant {
  id: string;
  conversationKey: string;
  toolName: string;
  risk: Risk;
  /** With their platform: an approval decided over the API is granted by an API key. The last to grant it. */
  grantedBy: Person;
  /** Everyone who granted it (a two-person grant has two): none of them is covered for a high-risk call. */
  grantors: Person[];
  approvalId: string;
  /** How many approvers granted it together: it covers calls that need at most that many. */
  quorum?: number;
  expiresAt: Date;
}

export interface GrantRepository {
  create(grant: Omit<ApprovalGrant, 'id'>): Promise<ApprovalGrant>;
  /** The live grants for this tool in this conversation, latest ending first. */
  listActiveFor(conversationKey: string, toolName: string, now: Date): Promise<ApprovalGrant[]>;
  listActive(conversationKey: string, now: Date): Promise<ApprovalGrant[]>;
  /** Ends every live grant of the conversation; returns them. */
  revokeActive(conversationKey: string, revokedBy: ChatUser, now: Date): Promise<ApprovalGrant[]>;
}

export interface Memory {
  id: string;
  content: string;
  createdAt: Date;
}

/** Whose memories: a person, whichever of their identities speaks. */
export interface MemoryOwner {
  /** The person's key (`People.keyOf`): a new memory is saved under it. */
  key: string;
  /** Every key a memory of theirs may carry: theirs, and their identities' (saved before `people:` listed them). */
  keys: readonly string[];
  /** Where, and as whom, a new memory was told (kept beside it). */
  platform: Platform;
  workspace: string;
  userId: string;
}

export interface MemoryRepository {
  add(owner: MemoryOwner, content: string): Promise<Memory>;
  /** Memories whose text contains every word of the query (all of them when the query is empty). */
  search(owner: MemoryOwner, query: string, limit: number): Promise<Memory[]>;
  /** Marks memories as used (recall), so they rank higher in the prompt (`TurnOpening.memories`). */
  touch(ids: readonly string[]): Promise<void>;
  remove(owner: MemoryOwner, id: string): Promise<boolean>;
}
