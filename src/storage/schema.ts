import { type SQLWrapper, sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { ConversationEvent } from '../core/contracts/conversation-events.js';
import type { ChatUser, Person, Platform } from '../core/contracts/events.js';
import type { FileMention } from '../core/contracts/files.js';
import type { ToolCall } from '../core/contracts/messages.js';
import type {
  ApprovalNoticeCard,
  ApprovalVote,
  InboxPayload,
  InflightTurn,
  ResumeState,
  RoutingIntent,
  RoutingRecord,
} from '../core/contracts/store.js';
import type { ToolOrigin } from '../core/tools/tool.js';

/**
 * Butler's tables. Status-like columns are text checked in TypeScript rather than enums, so the
 * generated SQL stays schema-agnostic. Compacted messages are kept (flagged), never deleted.
 */

export { budgetNotices } from './budgets-schema.js';
export { busEvents } from './bus-schema.js';
export { connectionWaits, oauthConnections, oauthFlows, oauthServers } from './connections-schema.js';
export { feedback } from './feedback-schema.js';
export { feishuSecrets, feishuTenants } from './feishu-schema.js';
export { fileContents, files } from './files-schema.js';
export { inputWaits } from './inputs-schema.js';
export { installations } from './installations-schema.js';
export { butlerProcesses } from './roster-schema.js';
export { scheduleRuns, schedules } from './schedules-schema.js';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const conversations = pgTable('conversations', {
  id: uuid('id').primaryKey().defaultRandom(),
  key: text('key').notNull().unique(),
  platform: text('platform').$type<Platform>().notNull(),
  workspace: text('workspace').notNull(),
  channel: text('channel').notNull(),
  thread: text('thread').notNull(),
  summary: text('summary'),
  summaryTokens: integer('summary_tokens').notNull().default(0),
  lastCompactedAt: timestamp('last_compacted_at', { withTimezone: true }),
  compactionRetryAt: timestamp('compaction_retry_at', { withTimezone: true }),
  tokenScale: real('token_scale').notNull().default(1),
  promptTokensTotal: bigint('prompt_tokens_total', { mode: 'number' }).notNull().default(0),
  completionTokensTotal: bigint('completion_tokens_total', { mode: 'number' }).notNull().default(0),
  inflight: jsonb('inflight').$type<InflightTurn>(),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const messages = pgTable(
  'messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    role: text('role').$type<'user' | 'assistant' | 'tool'>().notNull(),
    content: text('content').notNull(),
    /** Display name of the person who wrote a user message. */
    author: text('author'),
    toolCalls: jsonb('tool_calls').$type<ToolCall[]>(),
    toolCallId: text('tool_call_id'),
    /** Platform messages that showed an assistant reply (crash recovery, the reply a rating is about). */
    platformMessageIds: jsonb('platform_message_ids').$type<string[]>(),
    /** The turn that wrote it (null for rows older than the column, and for messages no turn wrote). */
    turnId: text('turn_id'),
    /** Files a user message shared, or an assistant step sent, by reference (never the bytes). */
    files: jsonb('files').$type<FileMention[]>(),
    tokens: integer('tokens').notNull(),
    compacted: boolean('compacted').notNull().default(false),
    createdAt: createdAt(),
  },
  (table) => [
    index('messages_window_idx').on(table.conversationId, table.compacted, table.id),
    // A click names a platform message: `platform_message_ids @> '["ts"]'` finds its reply.
    index('messages_platform_ids_idx').using('gin', table.platformMessageIds),
    index('messages_turn_idx').on(table.turnId),
  ],
);

export const compactions = pgTable(
  'compactions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    tokensBefore: integer('tokens_before').notNull(),
    tokensAfter: integer('tokens_after').notNull(),
    messagesFolded: integer('messages_folded').notNull(),
    model: text('model').notNull(),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('compactions_conversation_idx').on(table.conversationId)],
);

/**
 * An inbox event still to be handled. A literal, not parameters: the partial indexes below serve only
 * queries with this same predicate, and prepared statements are planned for any parameter values.
 */
export const isOpenEvent = (status: SQLWrapper) => sql`${status} in ('pending', 'claimed')`;

export const inboundEvents = pgTable(
  'inbound_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    platform: text('platform').$type<Platform>().notNull(),
    dedupKey: text('dedup_key').notNull(),
    conversationKey: text('conversation_key').notNull(),
    userId: text('user_id').notNull(),
    /** The person behind it (`People.keyOf`): one rate limit however many identities they write from. */
    senderKey: text('sender_key').notNull().default(''),
    kind: text('kind').$type<InboxPayload['kind']>().notNull(),
    payload: jsonb('payload').$type<InboxPayload>().notNull(),
    /** pending → claimed → done | rate_limited | failed */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    claimedBy: text('claimed_by'),
    error: text('error'),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (table) => [
    // Dedup key first: led by platform, the planner once took this index for the claim's sender-rank
    // count (platform and user) on stale statistics and walked every event of the platform.
    uniqueIndex('inbound_events_dedup_idx').on(table.dedupKey, table.platform),
    index('inbound_events_open_idx').on(table.conversationKey, table.id).where(isOpenEvent(table.status)),
    // The claim takes the oldest open event: without this it walks past every finished event first.
    // (The claim walks it through butler_claim_candidates, a function of migration 0008.)
    index('inbound_events_open_order_idx').on(table.id).where(isOpenEvent(table.status)),
    // The claim walks only events nobody is answering (butler_pending_candidates, migration 0028): walking the
    // open ones, it stepped past every turn in flight, each claim, hundreds of them.
    index('inbound_events_pending_idx').on(table.id).where(sql`${table.status} = 'pending'`),
    index('inbound_events_sender_idx').on(table.senderKey, table.createdAt),
  ],
);

/** One worker holds a conversation at a time; a lease that is not renewed lapses (crashed worker). */
export const conversationLeases = pgTable('conversation_leases', {
  conversationKey: text('conversation_key').primaryKey(),
  owner: text('owner').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

/**
 * The calls in flight to a model capped by `model.maxConcurrent`, across every process of the database: slot
 * numbers 0..cap-1, each held by one process until released or, should it die, until its lease lapses.
 */
export const modelSlots = pgTable(
  'model_slots',
  {
    model: text('model').notNull(),
    slot: integer('slot').notNull(),
    holder: text('holder').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.model, table.slot] })],
);

export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The calls of one model step that wait together on one card; null (older rows) = a batch of one. */
    batchId: uuid('batch_id'),
    conversationKey: text('conversation_key').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    toolName: text('tool_name').notNull(),
    /** Where the tool came from (an MCP server), for the card even while that server is down. */
    origin: jsonb('origin').$type<ToolOrigin>(),
    /** A sub-agent's call: the agent, and Butler's `delegate` call whose run asked for it. */
    agent: text('agent'),
    delegateCallId: text('delegate_call_id'),
    toolCallId: text('tool_call_id').notNull(),
    arguments: jsonb('arguments').$type<unknown>().notNull(),
    risk: text('risk').$type<'low' | 'medium' | 'high'>().notNull(),
    summary: text('summary').notNull(),
    requestedBy: jsonb('requested_by').$type<ChatUser>().notNull(),
    /** Everyone whose message the turn answered; null (older rows) = `requested_by` alone. */
    requesters: jsonb('requesters').$type<ChatUser[]>(),
    /** A personal call (a memory saved for someone): only this person decides it. */
    confirmBy: jsonb('confirm_by').$type<ChatUser>(),
    /** Approvers configured when it was asked, for the record; decisions check the list in force. */
    approverIds: jsonb('approver_ids').$type<string[]>().notNull(),
    /** pending → approved | rejected | expired */
    status: text('status')
      .$type<'pending' | 'approved' | 'rejected' | 'expired'>()
      .notNull()
      .default('pending'),
    /** With the decider's platform (older rows: none, meaning the approval's). */
    decidedBy: jsonb('decided_by').$type<ChatUser & { platform?: Platform }>(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    reason: text('reason'),
    /** Approved "for this conversation": the standing approval it granted lasts until then. */
    standingUntil: timestamp('standing_until', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Since when its workspace has been without Butler (uninstalled): it waits, neither expiring nor reminding. */
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    /** When Butler was last back in its workspace after a pause: its reminders count from then, not from the ask. */
    resumedAt: timestamp('resumed_at', { withTimezone: true }),
    cardMessageId: text('card_message_id'),
    /** Distinct approvals it needs (`approvalPolicy.quorum`); 1 for most. */
    quorum: integer('quorum').notNull().default(1),
    /** Approvals given so far while it needs more than one: each person once. */
    votes: jsonb('votes').$type<ApprovalVote[]>().notNull().default([]),
    /** When its approvers were reminded, and when it was escalated (each happens once). */
    remindedAt: timestamp('reminded_at', { withTimezone: true }),
    escalatedAt: timestamp('escalated_at', { withTimezone: true }),
    /** Cards of it sent to people directly (reminders, escalations): decidable like the card itself. */
    noticeCards: jsonb('notice_cards').$type<ApprovalNoticeCard[]>().notNull().default([]),
    resume: jsonb('resume').$type<ResumeState>().notNull(),
    /** running → succeeded | failed | skipped: the once-only guard of the approved call. */
    execution: text('execution').$type<'running' | 'succeeded' | 'failed' | 'skipped'>(),
    result: text('result'),
    createdAt: createdAt(),
  },
  (table) => [
    index('approvals_pending_idx').on(table.expiresAt).where(sql`${table.status} = 'pending'`),
    index('approvals_conversation_idx').on(table.conversationKey),
    index('approvals_batch_idx').on(table.batchId),
  ],
);

/**
 * Standing approvals: an approver let every later call of one tool in one conversation run without a
 * card until `expires_at`, unless revoked first.
 */
export const approvalGrants = pgTable(
  'approval_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationKey: text('conversation_key').notNull(),
    toolName: text('tool_name').notNull(),
    /** The highest risk it covers: a tool whose risk was raised since needs a card again. */
    risk: text('risk').$type<'low' | 'medium' | 'high'>().notNull(),
    /** With the grantor's platform (older rows: none, meaning the conversation's). */
    grantedBy: jsonb('granted_by').$type<ChatUser & { platform?: Platform }>().notNull(),
    /** The approval whose card granted it. */
    approvalId: uuid('approval_id').notNull(),
    /** How many approvers granted it together: it covers calls that need at most that many. */
    quorum: integer('quorum').notNull().default(1),
    /** Everyone who granted it, each with their platform (older rows: none, meaning `granted_by` alone). */
    grantors: jsonb('grantors').$type<Array<ChatUser & { platform: Platform }>>(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: jsonb('revoked_by').$type<ChatUser>(),
    createdAt: createdAt(),
  },
  (table) => [index('approval_grants_lookup_idx').on(table.conversationKey, table.toolName)],
);

export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationKey: text('conversation_key').notNull(),
    approvalId: uuid('approval_id'),
    toolName: text('tool_name').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    arguments: jsonb('arguments').$type<unknown>(),
    risk: text('risk').notNull(),
    decision: text('decision').notNull(),
    outcome: text('outcome').notNull(),
    actor: text('actor').notNull(),
    /** Everyone whose message the turn answered (user ids on the conversation's platform). */
    requesters: jsonb('requesters').$type<string[]>(),
    decidedBy: text('decided_by'),
    /** The standing approval that let it run without a card. */
    grantId: uuid('grant_id'),
    /** The sub-agent that made the call; null for Butler's own calls. */
    agent: text('agent'),
    /** The scheduled task whose run made the call; null when a person's message did. */
    scheduleId: uuid('schedule_id'),
    /** The channel profile of the conversation; null where the defaults applied. */
    profile: text('profile'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('audit_log_conversation_idx').on(table.conversationKey, table.createdAt)],
);

/**
 * One run of a sub-agent inside a turn, up to its result or to the approval it parked on (a run continued
 * after a decision is a second row): what it cost, per agent.
 */
export const agentRuns = pgTable(
  'agent_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationKey: text('conversation_key').notNull(),
    turnId: uuid('turn_id').notNull(),
    agent: text('agent').notNull(),
    delegateCallId: text('delegate_call_id').notNull(),
    /** done | parked | failed */
    status: text('status').$type<'done' | 'parked' | 'failed'>().notNull(),
    steps: integer('steps').notNull(),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    index('agent_runs_agent_idx').on(table.agent, table.createdAt),
    index('agent_runs_conversation_idx').on(table.conversationKey, table.createdAt),
  ],
);

/** Why a turn went the way it did: the routing model's decision and what Butler made of it. */
export const routingDecisions = pgTable(
  'routing_decisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationKey: text('conversation_key').notNull(),
    turnId: uuid('turn_id').notNull(),
    /** The validated decision; null when there was none (invalid, slow, failing). */
    intent: text('intent').$type<RoutingIntent>(),
    agent: text('agent'),
    confidence: real('confidence'),
    reasoning: text('reasoning'),
    /** What Butler did: delegated, clarified, answered itself, or fell back to a normal turn. */
    action: text('action').$type<RoutingRecord['action']>().notNull(),
    error: text('error'),
    model: text('model').notNull(),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('routing_decisions_conversation_idx').on(table.conversationKey, table.createdAt)],
);

/** What the HTTP API streams per conversation, kept so a client can resume from any event or read later. */
export const conversationEvents = pgTable(
  'conversation_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationKey: text('conversation_key').notNull(),
    event: jsonb('event').$type<ConversationEvent>().notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('conversation_events_key_idx').on(table.conversationKey, table.id)],
);

/**
 * One finished turn's tokens and cost, with the dimensions usage is rolled up by (denormalized from the
 * conversation key so that roll-ups read this table alone). `day` is the UTC day the turn ended.
 */
export const turnUsage = pgTable(
  'turn_usage',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Text, not uuid: turn ids are opaque to the core, and a usage row must never fail a turn's commit. */
    turnId: text('turn_id').notNull(),
    conversationKey: text('conversation_key').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    workspace: text('workspace').notNull(),
    channel: text('channel').notNull(),
    userId: text('user_id').notNull(),
    /** The platform of `user_id` when it is not the conversation's (an API key's task in a Slack channel). */
    userPlatform: text('user_platform').$type<Platform>(),
    day: date('day', { mode: 'string' }).notNull().default(sql`(now() at time zone 'utc')::date`),
    /** Butler's model (null: none configured) and the compaction model when the turn compacted. */
    model: text('model'),
    compactionModel: text('compaction_model'),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    compactionTokens: integer('compaction_tokens').notNull(),
    /** USD; null when a model the turn used had no price. */
    costUsd: doublePrecision('cost_usd'),
    createdAt: createdAt(),
  },
  (table) => [
    index('turn_usage_day_idx').on(table.day),
    index('turn_usage_conversation_idx').on(table.conversationKey, table.day),
    index('turn_usage_channel_idx').on(table.workspace, table.channel, table.day),
    index('turn_usage_user_idx').on(table.platform, table.userId, table.day),
  ],
);

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    platform: text('platform').$type<Platform>().notNull(),
    workspace: text('workspace').notNull(),
    userId: text('user_id').notNull(),
    /**
     * Whose memory: the person (`People.keyOf`), whichever identity told it. Rows from before people existed
     * carry their identity's key (`<platform>:<id>`), which the person's reads include.
     */
    ownerKey: text('owner_key').notNull().default(''),
    content: text('content').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('memories_owner_key_idx').on(table.ownerKey, table.lastUsedAt)],
);

/** A person's request to stop the turn running in a conversation; the process running it polls for these. */
export const turnStops = pgTable('turn_stops', {
  conversationKey: text('conversation_key').primaryKey(),
  requestedBy: jsonb('requested_by').$type<Person>().notNull(),
  requestedAt: timestamp('requested_at', { withTimezone: true }).notNull().defaultNow(),
});
