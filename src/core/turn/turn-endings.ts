import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatAdapter, ReplyTarget } from '../contracts/adapter.js';
import { decodeConversationKey } from '../contracts/conversation-key.js';
import { ModelError } from '../contracts/errors.js';
import type { Person } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import { type ConversationMessage, keptMessages, keptResults } from '../contracts/messages.js';
import type {
  AgentFrame,
  ApprovalRecord,
  InboxOutcome,
  ResumeState,
  Store,
  TurnUsageRecord,
} from '../contracts/store.js';
import { countMessageTokens } from '../text/tokens.js';
import type { Resolution } from '../tool-calls/index.js';
import { costOf } from '../usage/pricing.js';
import { budgetCardNote } from './budget-note.js';
import { adapterFor, reportTurnEvent, type Turn, type TurnRunnerDeps } from './turn.js';

/**
 * How a turn ends: replied, parked for approval, or failed with a message to the user. Each ending
 * commits the turn's messages, its usage row and marks its inbox events in one transaction.
 */

const failureMessage = 'Sorry, something went wrong on my side while answering. Please try again.';

const withTokens = (messages: readonly ConversationMessage[]) =>
  messages.map((message) => ({ ...message, tokens: countMessageTokens(message) }));

const firstRetryDelayMs = 500;
const longestRetryDelayMs = 30_000;

/**
 * Ends the reply showing `text`. The text is known by now, so a platform that cannot take it (an outage:
 * `internal_error`, HTTP 5xx) is tried again with backoff until `deliveryRetryMs` has passed; only then
 * does the turn fail. A shutdown stops the waiting: the restarted turn delivers the same text.
 */
export async function deliverReply(deps: TurnRunnerDeps, turn: Turn, text?: string): Promise<void> {
  const giveUpAt = Date.now() + deps.options.deliveryRetryMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await turn.reply.finish(text);
      return;
    } catch (error) {
      const wait = Math.min(firstRetryDelayMs * 2 ** attempt, longestRetryDelayMs);
      if (turn.signal.aborted || Date.now() + wait > giveUpAt) throw error;
      turn.log.warn(
        { err: error, attempt: attempt + 1, retryInMs: wait },
        'the platform did not take the reply',
      );
      await sleep(wait, undefined, { signal: turn.signal }).catch(() => {});
    }
  }
}

/** The turn's messages, its final answer carrying the platform messages that show it. */
async function withReplyMessages(
  turn: Turn,
  messages: readonly ConversationMessage[],
): Promise<ConversationMessage[]> {
  const platformMessageIds = await turn.reply.messageIds();
  return messages.map((message, index) =>
    index === messages.length - 1 && message.role === 'assistant' && platformMessageIds.length > 0
      ? { ...message, platformMessageIds }
      : message,
  );
}

/** Delivers the full reply, then commits the turn. `finalContent` is the last model answer. */
export async function completeTurn(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
  finalContent: string | undefined,
) {
  if (turn.reply.shown.trim().length === 0) await turn.reply.append("I don't have anything to add to that.");
  const messages: ConversationMessage[] = [
    ...pending,
    { role: 'assistant', content: finalContent?.trim() ? finalContent : turn.reply.shown },
  ];
  turn.inflight.deliver({ text: turn.reply.shown, messages });
  await turn.inflight.save();
  await deliverReply(deps, turn);
  await commitTurn(deps, turn, await withReplyMessages(turn, messages), 'done');
  turn.session.ended('replied');
  turn.observer.end({ status: 'replied' });
  await reportTurnEvent(turn, { type: 'done', turnId: turn.id, usage: usageOf(turn) });
}

const usageOf = (turn: Turn) => ({
  promptTokens: turn.usage.promptTokens,
  completionTokens: turn.usage.completionTokens,
});

/**
 * Ends a turn someone stopped: the reply keeps what was written, marked with who stopped it; the history
 * and the audit log say so too. The next message is answered as usual.
 */
export async function stopTurn(deps: TurnRunnerDeps, turn: Turn, pending: ConversationMessage[], by: Person) {
  const mark = `_Stopped by ${by.name ?? by.id}._`;
  const text = turn.reply.shown.trim() ? `${turn.reply.shown}\n\n${mark}` : mark;
  const messages: ConversationMessage[] = [...pending, { role: 'assistant', content: text }];
  turn.inflight.deliver({ text, messages });
  await turn.inflight.save();
  await deliverReply(deps, turn, text);
  await commitTurn(deps, turn, await withReplyMessages(turn, messages), 'done');
  await deps.store.audit
    .record({
      conversationKey: turn.conversation.key,
      approvalId: null,
      toolName: 'stop',
      toolCallId: turn.id,
      arguments: { platform: by.platform, user: by.id },
      // Stopping only ends a reply: anyone the conversation lets in may do it, as with a low-risk tool.
      risk: 'low',
      decision: 'auto',
      outcome: 'not_run',
      actor: turn.requester.id,
      requesters: turn.requesters.map((person) => person.id),
      decidedBy: by.id,
      error: `turn stopped by ${by.name ?? by.id}`,
      durationMs: 0,
    })
    .catch((error: unknown) => turn.log.error({ err: error }, 'audit write failed'));
  turn.log.info({ stoppedBy: by.id }, 'turn stopped');
  turn.session.ended('stopped');
  turn.observer.end({ status: 'stopped' });
  await reportTurnEvent(turn, { type: 'done', turnId: turn.id, usage: usageOf(turn) });
}

/** A restarted turn whose reply was complete: make sure it is fully shown, then commit it. */
export async function redeliverTurn(deps: TurnRunnerDeps, turn: Turn) {
  const delivered = turn.inflight.delivered;
  if (!delivered) return;
  await deliverReply(deps, turn, delivered.text);
  await commitTurn(deps, turn, await withReplyMessages(turn, delivered.messages), 'done');
  turn.observer.end({ status: 'replied' });
  await reportTurnEvent(turn, { type: 'done', turnId: turn.id, usage: usageOf(turn) });
}

/** Stops the turn at the calls that need a person's decision: persist them as one batch, then show its card. */
export async function parkTurn(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
  assistant: {
    content: string;
    toolCalls: NonNullable<Extract<ConversationMessage, { role: 'assistant' }>['toolCalls']>;
  },
  resolution: Extract<Resolution, { status: 'needs_approval' }>,
) {
  const { store, approvals, options } = deps;
  if (turn.reply.opened) await deliverReply(deps, turn);
  const batchId = randomUUID();
  const expiresAt = new Date(Date.now() + options.approvalTtlMs);
  const resume = await resumeStateOf(turn, assistant, resolution.results, resolution.agents);
  // Near a budget, the card (its first call) says what continuing may cost.
  const budgetNote = await budgetCardNote(deps, turn);
  const batch = await store.transaction(async (tx) => {
    const created = [];
    for (const [index, { call, tool, input, agent, risk, confirmBy }] of resolution.pending.entries()) {
      const summary = tool.summarize(input);
      created.push(
        await tx.approvals.create(
          approvals.newApproval({
            batchId,
            conversationKey: turn.conversation.key,
            platform: turn.target.address.platform,
            toolName: tool.name,
            ...(tool.origin ? { origin: tool.origin } : {}),
            ...(agent ? { agent } : {}),
            toolCallId: call.id,
            arguments: input,
            risk,
            summary: index === 0 && budgetNote ? `${summary}\n${budgetNote}` : summary,
            requestedBy: turn.requester,
            requesters: turn.requesters,
            ...(confirmBy ? { confirmBy } : {}),
            expiresAt,
            resume,
          }),
        ),
      );
    }
    await commitTurnWith(deps, tx, turn, pending, 'done');
    return created;
  });
  for (const approval of batch) {
    turn.log.info(
      {
        approvalId: approval.id,
        batchId,
        tool: approval.toolName,
        risk: approval.risk,
        ...(approval.agent ? { agent: approval.agent.name } : {}),
      },
      'turn parked for approval',
    );
    turn.observer.approvalRequested({
      approvalId: approval.id,
      conversationKey: approval.conversationKey,
      toolName: approval.toolName,
      risk: approval.risk,
    });
  }
  turn.session.ended('parked');
  turn.observer.end({ status: 'parked' });
  await postApprovalCard(deps, turn.adapter, turn.target, batch, turn.log);
}

/** A sub-agent's parked run as it may be stored: its tool results the model alone may read, as kept. */
const keptFrame = (frame: AgentFrame): AgentFrame => ({
  ...frame,
  messages: keptMessages(frame.messages),
  results: keptResults(frame.results),
});

/** What a parked turn needs to go on in any process: the step that waits, and what it already has. */
export async function resumeStateOf(
  turn: Turn,
  assistant: ResumeState['assistant'],
  results: ResumeState['results'],
  agents: readonly AgentFrame[] = [],
): Promise<ResumeState> {
  return {
    turnId: turn.id,
    assistant,
    results: keptResults(results),
    isDirect: turn.isDirect,
    replyMessageIds: await turn.reply.messageIds(),
    ...(turn.target.replyTo ? { replyTo: turn.target.replyTo } : {}),
    ...(turn.scheduleId ? { scheduleId: turn.scheduleId } : {}),
    ...(agents.length > 0 ? { agents: agents.map(keptFrame) } : {}),
    ...(turn.overBudget ? { overBudget: true } : {}),
  };
}

/** Posts the cards of batches that a crash kept from being shown. */
export async function postMissingCards(deps: TurnRunnerDeps, olderThan: Date): Promise<void> {
  const batches = new Map<string, ApprovalRecord[]>();
  for (const approval of await deps.store.approvals.listWithoutCard(olderThan))
    batches.set(approval.batchId, [...(batches.get(approval.batchId) ?? []), approval]);
  for (const batch of batches.values()) {
    const [first] = batch;
    if (!first) continue;
    const address = decodeConversationKey(first.conversationKey);
    // Another process serving that platform posts it (the same sweep runs there).
    if (!deps.adapters.has(address.platform)) continue;
    await postApprovalCard(
      deps,
      adapterFor(deps, address.platform),
      {
        address,
        ...(first.resume.replyTo ? { replyTo: first.resume.replyTo } : {}),
        userId: first.requestedBy.id,
      },
      batch,
      deps.logger,
    );
  }
}

/** Posts a batch's card and records where it is; a failure is told to the user in a notice. */
export async function postApprovalCard(
  deps: TurnRunnerDeps,
  adapter: ChatAdapter,
  target: ReplyTarget,
  batch: readonly ApprovalRecord[],
  log: Logger,
) {
  const [first] = batch;
  if (!first) return;
  try {
    const messageId = await adapter.postApprovalCard(target, deps.approvals.card(batch));
    await deps.store.approvals.setCardMessage(first.batchId, messageId);
  } catch (error) {
    log.error({ err: error, batchId: first.batchId }, 'could not post the approval card');
    const tools = [...new Set(batch.map((approval) => approval.toolName))].join(', ');
    await adapter
      .postNotice(
        target,
        `I need approval to run ${tools}, but could not show the approval card. Please try again.`,
      )
      .catch(() => {});
  }
}

/** Ends a failed turn with a message to the user; what completed (the user's words, finished tool steps) is kept. */
export async function failTurn(
  deps: TurnRunnerDeps,
  turn: Turn,
  pending: ConversationMessage[],
  error: unknown,
) {
  const userMessage = error instanceof ModelError ? error.userMessage : failureMessage;
  turn.log.error({ err: error, code: error instanceof ModelError ? error.code : undefined }, 'turn failed');
  try {
    if (turn.reply.opened) await turn.reply.finish(`${turn.reply.shown}\n\n⚠️ ${userMessage}`);
    else await turn.adapter.postNotice(turn.target, `⚠️ ${userMessage}`);
  } catch (deliveryError) {
    turn.log.error({ err: deliveryError }, 'could not tell the user about the failure');
  }
  await commitTurn(deps, turn, pending, 'failed', error instanceof Error ? error.message : String(error));
  turn.session.ended('failed');
  turn.observer.end({ status: 'failed', error: userMessage });
  await reportTurnEvent(turn, {
    type: 'error',
    error: userMessage,
    ...(error instanceof ModelError ? { detail: error.message } : {}),
  });
}

/** The commit is one statement: atomic without a transaction of its own. */
function commitTurn(
  deps: TurnRunnerDeps,
  turn: Turn,
  messages: readonly ConversationMessage[],
  outcome: InboxOutcome,
  error?: string,
) {
  return commitTurnWith(deps, deps.store, turn, messages, outcome, error);
}

/** The turn's usage row: Butler's model prices its tokens (sub-agents' included), the compaction model its own. */
function usageRecord(deps: TurnRunnerDeps, turn: Turn): TurnUsageRecord {
  const { address } = turn.conversation;
  const model = turn.profile.model?.model ?? null;
  const { promptTokens, completionTokens, compaction } = turn.usage;
  const parts = [
    ...(model ? [{ model, promptTokens, completionTokens }] : []),
    ...(compaction ? [compaction] : []),
  ];
  return {
    turnId: turn.id,
    conversationKey: turn.conversation.key,
    platform: address.platform,
    workspace: address.workspace,
    channel: address.channel,
    userId: turn.requester.id,
    userPlatform:
      turn.requester.platform && turn.requester.platform !== address.platform
        ? turn.requester.platform
        : null,
    model,
    compactionModel: compaction?.model ?? null,
    promptTokens,
    completionTokens,
    compactionTokens: compaction ? compaction.promptTokens + compaction.completionTokens : 0,
    costUsd: costOf(parts, deps.options.pricing ?? {}),
  };
}

export async function commitTurnWith(
  deps: TurnRunnerDeps,
  tx: Store,
  turn: Turn,
  messages: readonly ConversationMessage[],
  outcome: InboxOutcome,
  error?: string,
) {
  await tx.turns.commit({
    conversationId: turn.conversation.id,
    messages: withTokens(keptMessages(messages)),
    promptTokens: turn.usage.promptTokens,
    completionTokens: turn.usage.completionTokens,
    tokenScale: turn.usage.tokenScale,
    eventIds: turn.eventIds,
    outcome,
    ...(error === undefined ? {} : { error }),
    usage: usageRecord(deps, turn),
  });
}
