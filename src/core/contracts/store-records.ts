import type { ChatUser, ConversationAddress, Platform } from './events.js';
import type { ConversationMessage, StoredMessage } from './messages.js';
import type { Identity } from './people.js';
import type { ConversationRecord, InboxOutcome, Memory, MemoryOwner } from './repositories.js';

/**
 * Storage contracts of what turns read and record beside the conversation: a turn's opening read and
 * closing write, sub-agent runs, routing decisions and token usage (split from `store.ts`, which
 * re-exports them; the Store holds their repositories).
 */

// ── a turn's one read and one write ─────────────────────────────────────────────────────────────

/** What a turn needs before it can build its prompt, read in one statement. */
export interface TurnOpening {
  /** Created on first sight. */
  conversation: ConversationRecord;
  /** The messages not yet folded into the summary, oldest first. */
  window: StoredMessage[];
  /** Approvals still waiting in the conversation, oldest first (the prompt says not to ask again). */
  pendingApprovals: Array<{ toolName: string; summary: string; requestedBy: ChatUser }>;
  /** The requester's memories for the prompt: most recently saved or recalled first. */
  memories: Memory[];
}

/** Everything a finished (or failed) turn writes, applied atomically. */
export interface TurnCommit {
  conversationId: string;
  messages: ReadonlyArray<ConversationMessage & { tokens: number }>;
  /** Added to the conversation's totals; `tokenScale` replaces its calibration. */
  promptTokens: number;
  completionTokens: number;
  tokenScale: number;
  eventIds: readonly number[];
  outcome: InboxOutcome;
  error?: string;
  usage: TurnUsageRecord;
}

export interface TurnRepository {
  open(input: {
    conversationKey: string;
    address: ConversationAddress;
    memoriesOf: MemoryOwner;
    memoriesLimit: number;
  }): Promise<TurnOpening>;
  /**
   * Appends the turn's messages, clears the conversation's `inflight` and adds its usage, marks its
   * inbox events with the outcome, and records its usage row: one statement, so all or nothing.
   */
  commit(commit: TurnCommit): Promise<void>;
}

// ── sub-agents and routing ──────────────────────────────────────────────────────────────────────

/** One run of a sub-agent, up to its result or to the approval it parked on. */
export interface AgentRun {
  conversationKey: string;
  turnId: string;
  agent: string;
  delegateCallId: string;
  status: 'done' | 'parked' | 'failed';
  steps: number;
  promptTokens: number;
  completionTokens: number;
  error: string | null;
  durationMs: number;
}

export interface AgentUsage {
  agent: string;
  runs: number;
  promptTokens: number;
  completionTokens: number;
}

export interface AgentRunRepository {
  record(run: AgentRun): Promise<void>;
  /** Token usage per agent over runs since `since` (optionally in one conversation), busiest first. */
  usageByAgent(since: Date, conversationKey?: string): Promise<AgentUsage[]>;
}

export type RoutingIntent = 'direct_answer' | 'delegate' | 'clarify' | 'cannot_help';

/** The routing model's decision for a turn and what Butler did with it. */
export interface RoutingRecord {
  conversationKey: string;
  turnId: string;
  intent: RoutingIntent | null;
  agent: string | null;
  confidence: number | null;
  reasoning: string | null;
  action: 'delegated' | 'clarify' | 'answer' | 'fallback';
  error: string | null;
  model: string;
  durationMs: number;
}

export interface RoutingRepository {
  record(decision: RoutingRecord): Promise<void>;
  /** The conversation's decisions, oldest first. */
  list(conversationKey: string): Promise<Array<RoutingRecord & { createdAt: Date }>>;
}

// ── usage ───────────────────────────────────────────────────────────────────────────────────────

/** One finished turn's tokens and cost (replied, failed or parked; a continuation is a turn of its own). */
export interface TurnUsageRecord {
  turnId: string;
  conversationKey: string;
  platform: Platform;
  workspace: string;
  channel: string;
  /** The person the turn answered (for a continuation: who asked before the card). */
  userId: string;
  /** The platform of `userId` when it is not the conversation's (an API key's task in a Slack channel). */
  userPlatform: Platform | null;
  /** Butler's model; null when none is configured. */
  model: string | null;
  /** The compaction model, when the turn folded history into the summary. */
  compactionModel: string | null;
  /** Butler's model and its sub-agents', as reported by the models. */
  promptTokens: number;
  completionTokens: number;
  /** The compaction model's prompt and completion tokens. */
  compactionTokens: number;
  /** USD; null when a model the turn used has no price. */
  costUsd: number | null;
  /** When the turn ended; the database's clock when absent. */
  at?: Date;
}

export type UsageGroup = 'conversation' | 'workspace' | 'channel' | 'user' | 'day';

export interface UsageTotals {
  turns: number;
  promptTokens: number;
  completionTokens: number;
  compactionTokens: number;
  /** The sum over the turns that were priced; null when none was. */
  costUsd: number | null;
}

/**
 * One group of a roll-up. `key`: the conversation key, the workspace, `workspace/channel`,
 * `platform:user_id`, or the UTC day `YYYY-MM-DD`.
 */
export interface UsageRollup extends UsageTotals {
  key: string;
}

export interface UsageRepository {
  record(row: TurnUsageRecord): Promise<void>;
  /**
   * Usage per group over turns from `since` (inclusive) to `until` (exclusive): days newest first, other
   * groups the most tokens first.
   */
  rollup(input: {
    groupBy: UsageGroup;
    since?: Date;
    until?: Date;
    limit?: number;
    /** Conversation keys starting with any of these (a tenant's); absent: all usage. */
    tenants?: readonly string[] | undefined;
  }): Promise<UsageRollup[]>;
  /**
   * Usage since `since` of one conversation, one person (`users`: every identity of theirs, each the
   * platform and id a turn's requester had), a workspace or a channel (`platform` with `workspace` or
   * `channel`): every filter given applies.
   */
  totals(input: {
    conversationKey?: string;
    platform?: string;
    workspace?: string;
    channel?: string;
    users?: readonly Identity[];
    since: Date;
  }): Promise<UsageTotals>;
  /** All-time usage of each of these conversations that has any. */
  byConversation(keys: readonly string[]): Promise<Map<string, UsageTotals>>;
}
