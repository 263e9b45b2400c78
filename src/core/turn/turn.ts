import { randomUUID } from 'node:crypto';
import type { Delegator } from '../agents/delegator.js';
import type { Router } from '../agents/router.js';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { SessionBrain } from '../brain/session-brain.js';
import type { BudgetBook } from '../budgets/index.js';
import type { ConnectionBook } from '../connections/connection-book.js';
import type { ChatAdapter, ReplyTarget, TurnEvent } from '../contracts/adapter.js';
import type { ChatUser, Platform } from '../contracts/events.js';
import type { InputAnswer } from '../contracts/input-needed.js';
import type { Logger } from '../contracts/logger.js';
import type { ConversationMessage, ToolCall } from '../contracts/messages.js';
import type { Observer, TurnObserver } from '../contracts/observer.js';
import type {
  ApprovalRecord,
  ConversationRecord,
  InflightTurn,
  Store,
  TurnOpening,
} from '../contracts/store.js';
import type { Files } from '../files/index.js';
import type { LiveQuestions } from '../inputs/index.js';
import type { ModelClient } from '../model/model-client.js';
import type { ChannelProfiles, TurnProfile } from '../profiles/index.js';
import type { MessageGrants } from '../search/grants.js';
import type { TurnStop, TurnStops } from '../stop/turn-stops.js';
import { inCallOrder, type ParkedRun, type ToolResult } from '../tool-calls/index.js';
import { memoryOwnerOf } from '../tools/memory-tools.js';
import { toolsOn } from '../tools/platform-tools.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ModelTokens, PriceTable } from '../usage/pricing.js';
import { InflightRecord } from './inflight-record.js';
import { TurnReply } from './turn-reply.js';
import { TurnSession } from './turn-session.js';
import { WorkingIndicator } from './working-indicator.js';

/** One turn in progress, and how it starts: resuming an interrupted attempt when there was one. */

export interface TurnRunnerOptions {
  systemPrompt: string;
  maxSteps: number;
  approvalTtlMs: number;
  memoriesInPrompt: number;
  /** How long a finished reply the platform cannot take is retried before the turn fails. */
  deliveryRetryMs: number;
  /** The working indicator shows only if the reply has not started this long after the turn did. */
  workingIndicatorDelayMs: number;
  /** USD per million tokens by model name, for the cost of each turn; absent or `{}`: costs are unknown. */
  pricing?: PriceTable;
}

export interface TurnRunnerDeps {
  store: Store;
  brain: SessionBrain;
  model: ModelClient | undefined;
  tools: ToolRegistry;
  policy: ApprovalPolicy;
  approvals: ApprovalService;
  adapters: ReadonlyMap<Platform, ChatAdapter>;
  observer: Observer;
  logger: Logger;
  options: TurnRunnerOptions;
  /** Specialist agents Butler may delegate to; absent when none are configured. */
  delegator?: Delegator;
  /** The pre-turn routing decision; absent unless routing is on. */
  router?: Router;
  /** Shared files in, their content in prompts, produced files out; absent: files are not read. */
  files?: Files;
  /** Stop requests from any process; absent: turns cannot be stopped. */
  stops?: TurnStops;
  /** The configured budgets, checked before a turn calls the model; absent when there are none. */
  budgets?: BudgetBook;
  /** Channel profiles; absent: every conversation gets the model, tools and agents above. */
  profiles?: ChannelProfiles;
  /** People's OAuth connections; absent when no server needs one. */
  connections?: ConnectionBook;
  /** Calls waiting in this process for their person's answer to a server's question (2025 sessions). */
  live?: LiveQuestions;
  /** Opens the credentials platforms gave with messages (`InboundMessage.grant`); absent: none are kept. */
  grants?: MessageGrants;
}

/** Thrown when shutdown interrupts a turn: its events stay claimed and are retried after the restart. */
export class TurnInterruptedError extends Error {}

export interface Turn {
  id: string;
  conversation: ConversationRecord;
  /** What the turn read when it began: the history window, pending approvals, the requester's memories. */
  opening: Omit<TurnOpening, 'conversation'>;
  adapter: ChatAdapter;
  target: ReplyTarget;
  /** The person the turn answers last (its reply is addressed to them). */
  requester: ChatUser;
  /**
   * Everyone whose message the turn answers, each person once (whichever identity they wrote with), in the
   * order they last wrote; each is a requester of its calls, and how many there are is how many people asked.
   */
  requesters: ChatUser[];
  isDirect: boolean;
  /** The scheduled task this turn is a run of; absent when people's messages started it. */
  scheduleId?: string;
  /** An approver let this answer go on past a spent budget: it and its continuations are not checked again. */
  overBudget?: boolean;
  /** The opened credential of the one person's message this turn answers (`ToolContext.grant`). */
  grant?: string;
  /** Its conversation's channel profile: the model, tools and agents it uses, and its extra instructions. */
  profile: TurnProfile;
  eventIds: number[];
  inflight: InflightRecord;
  reply: TurnReply;
  /** Armed by the runner once the turn's work starts. */
  working: WorkingIndicator;
  /** The turn's life beside its reply (Slack's agent session); started by the runner, ended by the endings. */
  session: TurnSession;
  observer: TurnObserver;
  log: Logger;
  /** Aborts at shutdown, and when someone stops the turn (then `stop.stoppedBy` says who). */
  signal: AbortSignal;
  stop: TurnStop | undefined;
  usage: {
    promptTokens: number;
    completionTokens: number;
    tokenScale: number;
    /** The compaction model's tokens, when this turn folded history into the summary. */
    compaction: ModelTokens | null;
  };
}

/** Tells the turn's adapter what happened (tool calls, the end); a failing adapter is logged, never fatal. */
export async function reportTurnEvent(turn: Turn, event: TurnEvent): Promise<void> {
  if (!turn.adapter.onTurnEvent) return;
  try {
    await turn.adapter.onTurnEvent(turn.target, event);
  } catch (error) {
    turn.log.warn({ err: error, event: event.type }, 'the adapter could not take a turn event');
  }
}

/** The conversation's channel profile, or the defaults: Butler's model, every tool, every agent. */
function profileFor(deps: TurnRunnerDeps, address: ReplyTarget['address']): TurnProfile {
  return (
    deps.profiles?.forTurn(address) ?? {
      model: deps.model,
      tools: deps.tools,
      ...(deps.delegator ? { delegator: deps.delegator } : {}),
      ...(deps.router ? { router: deps.router } : {}),
    }
  );
}

export function adapterFor(deps: TurnRunnerDeps, platform: Platform): ChatAdapter {
  const adapter = deps.adapters.get(platform);
  if (!adapter) throw new Error(`No adapter for platform ${platform}`);
  return adapter;
}

/**
 * Messages an interrupted attempt created without recording them (it died while the platform call that
 * created one was in flight): the retried reply overwrites them. A failed lookup only loses the cleanup.
 */
async function findUnrecordedReplies(
  deps: TurnRunnerDeps,
  adapter: ChatAdapter,
  input: {
    conversation: ConversationRecord;
    target: ReplyTarget;
    after: string;
    known: string[];
    log: Logger;
  },
): Promise<string[]> {
  if (!adapter.findUnrecordedReplies) return [];
  try {
    const known = [
      ...input.known,
      ...(await deps.store.conversations.knownPlatformMessages(input.conversation)),
    ];
    const found = await adapter.findUnrecordedReplies(input.target, { after: input.after, known });
    const unrecorded = found.filter((id) => !input.known.includes(id));
    if (unrecorded.length > 0)
      input.log.warn(
        { messages: unrecorded },
        'an interrupted attempt left reply messages; overwriting them',
      );
    return unrecorded;
  } catch (error) {
    input.log.warn({ err: error }, 'could not look for messages of the interrupted attempt');
    return [];
  }
}

export async function beginTurn(
  deps: TurnRunnerDeps,
  input: {
    conversationKey: string;
    eventIds: number[];
    target: ReplyTarget;
    /** Everyone the turn answers, in the order they last wrote: the last is whom the reply answers. */
    requesters: ChatUser[];
    isDirect: boolean;
    trigger: 'message' | 'resume';
    /** A scheduled task's run (or its continuation after a decision): its id, for traces and audit. */
    scheduleId?: string | undefined;
    signal: AbortSignal;
    /**
     * Set when the turn's events were claimed before and never finished (the process died): the
     * platform message the interrupted attempt's reply can only have come after.
     */
    retriedAfter?: string | undefined;
    /** Platform messages shown by this turn before it parked (a continuation must not reuse them). */
    shownBefore?: readonly string[];
    /** The opened credential of the message the turn answers, when it answers one person. */
    grant?: string | undefined;
  },
): Promise<Turn> {
  const { store } = deps;
  const address = input.target.address;
  const requester = input.requesters.at(-1);
  if (!requester) throw new Error('a turn answers at least one person');
  const { conversation, ...opening } = await store.turns.open({
    conversationKey: input.conversationKey,
    address,
    memoriesOf: memoryOwnerOf(deps.policy.people, address, requester),
    // Personal notes only in a turn that answers their owner alone: in a shared turn they would reach others.
    memoriesLimit: input.requesters.length === 1 ? deps.options.memoriesInPrompt : 0,
  });
  const earlier = conversation.inflight;
  const recovering = earlier?.eventIds.some((id) => input.eventIds.includes(id)) ? earlier : undefined;
  const id = recovering?.turnId ?? randomUUID();
  const inflight: InflightTurn = {
    turnId: id,
    eventIds: input.eventIds,
    replyMessageIds: recovering?.replyMessageIds ?? [],
  };
  if (recovering?.delivered) inflight.delivered = recovering.delivered;
  const log = deps.logger.child({ conversation: conversation.key, turn: id });
  if (recovering) log.warn({ events: input.eventIds }, 'resuming a turn interrupted by a restart');
  const adapter = adapterFor(deps, input.target.address.platform);
  if (input.retriedAfter !== undefined && !inflight.delivered) {
    const unrecorded = await findUnrecordedReplies(deps, adapter, {
      conversation,
      target: input.target,
      after: input.retriedAfter,
      known: [...inflight.replyMessageIds, ...(input.shownBefore ?? [])],
      log,
    });
    inflight.replyMessageIds.push(...unrecorded);
  }
  const record = new InflightRecord(store, conversation.id, inflight);
  const stop = deps.stops?.track(conversation.key);
  const defaults = profileFor(deps, address);
  const profile = { ...defaults, tools: toolsOn(defaults.tools, address.platform) };
  const reply = new TurnReply(
    adapter,
    input.target,
    {
      resume: [...inflight.replyMessageIds],
      onMessageCreated: (messageId) => record.messageCreated(messageId),
    },
    log,
  );
  const turn: Turn = {
    id,
    conversation,
    opening,
    adapter,
    target: input.target,
    requester,
    requesters: input.requesters,
    isDirect: input.isDirect,
    ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}),
    ...(input.grant ? { grant: input.grant } : {}),
    profile,
    eventIds: input.eventIds,
    inflight: record,
    reply,
    working: new WorkingIndicator(
      adapter,
      input.target,
      deps.options.workingIndicatorDelayMs,
      () => reply.opened,
    ),
    session: new TurnSession(adapter, input.target, log),
    observer: deps.observer.startTurn({
      turnId: id,
      conversationKey: conversation.key,
      platform: input.target.address.platform,
      userId: requester.id,
      trigger: input.trigger,
      ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}),
      ...(profile.name ? { profile: profile.name } : {}),
    }),
    log,
    signal: stop ? AbortSignal.any([input.signal, stop.signal]) : input.signal,
    stop,
    usage: { promptTokens: 0, completionTokens: 0, tokenScale: conversation.tokenScale, compaction: null },
  };
  // Nothing is written yet: until the reply creates a message there is nothing a restart must not repeat.
  return turn;
}

/** The tool messages of a step, in the order of its calls. */
export const toolMessages = (
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
): ConversationMessage[] => inCallOrder(calls, results).map((result) => ({ role: 'tool', ...result }));

/** What became of a parked step's waits: results, sub-agent runs that wait on, decisions still to apply. */
export interface Continued {
  decided: ToolResult[];
  parked: ParkedRun[];
  approvals?: readonly ApprovalRecord[];
  /** Answers to a server's question, for the call that asked it. */
  answers?: ReadonlyMap<string, InputAnswer>;
}
