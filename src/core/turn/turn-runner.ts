import { randomUUID } from 'node:crypto';
import type { ChatAdapter, ReplyTarget } from '../adapter.js';
import type { ApprovalService } from '../approvals/approval-service.js';
import { buildSystemPrompt } from '../brain/prompt.js';
import type { SessionBrain } from '../brain/session-brain.js';
import { decodeConversationKey } from '../conversation-key.js';
import { ModelError } from '../errors.js';
import type { ChatUser, InboundMessage, Platform } from '../events.js';
import type { Logger } from '../logger.js';
import type { ConversationMessage, StoredMessage } from '../messages.js';
import type { ModelClient } from '../model/model-client.js';
import type { Observer, TurnObserver } from '../observer.js';
import type { ApprovalRecord, ConversationRecord, InboxOutcome, InflightTurn, Store } from '../store.js';
import { countMessageTokens } from '../tokens.js';
import type { ApprovalPolicy } from '../tools/policy.js';
import type { ToolRegistry } from '../tools/registry.js';
import { resolveApprovedCall } from './resume.js';
import { type Resolution, resolveToolCalls, type ToolScope } from './tool-calls.js';
import { TurnReply } from './turn-reply.js';

/**
 * Runs turns: a batch of new messages, or the continuation after an approval decision. A turn's
 * messages reach the database in one transaction at its end (with its inbox events marked done),
 * so a crash never leaves the conversation half-written; `inflight` on the conversation records
 * what was already posted so a retried turn overwrites its reply instead of posting a second one.
 */

export interface TurnRunnerOptions {
  systemPrompt: string;
  maxSteps: number;
  approvalTtlMs: number;
  memoriesInPrompt: number;
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
}

/** Thrown when shutdown interrupts a turn: its events stay claimed and are retried after the restart. */
export class TurnInterruptedError extends Error {}

interface Turn {
  id: string;
  conversation: ConversationRecord;
  adapter: ChatAdapter;
  target: ReplyTarget;
  requester: ChatUser;
  isDirect: boolean;
  eventIds: number[];
  inflight: InflightTurn;
  reply: TurnReply;
  observer: TurnObserver;
  log: Logger;
  signal: AbortSignal;
  usage: { promptTokens: number; completionTokens: number; tokenScale: number };
}

const noModelMessage =
  'Butler has no model configured yet. An admin can set BUTLER_MODEL (and BUTLER_BASE_URL, BUTLER_API_TOKEN) to turn on answers.';
const failureMessage = 'Sorry, something went wrong on my side while answering. Please try again.';

const withTokens = (messages: readonly ConversationMessage[]) =>
  messages.map((message) => ({ ...message, tokens: countMessageTokens(message) }));

export class TurnRunner {
  constructor(private readonly deps: TurnRunnerDeps) {}

  private adapterFor(platform: Platform): ChatAdapter {
    const adapter = this.deps.adapters.get(platform);
    if (!adapter) throw new Error(`No adapter for platform ${platform}`);
    return adapter;
  }

  private async begin(input: {
    conversationKey: string;
    eventIds: number[];
    target: ReplyTarget;
    requester: ChatUser;
    isDirect: boolean;
    trigger: 'message' | 'resume';
    signal: AbortSignal;
  }): Promise<Turn> {
    const { store } = this.deps;
    const conversation = await store.conversations.ensure(input.conversationKey, input.target.address);
    const earlier = conversation.inflight;
    const recovering = earlier?.eventIds.some((id) => input.eventIds.includes(id)) ? earlier : undefined;
    const id = recovering?.turnId ?? randomUUID();
    const inflight: InflightTurn = {
      turnId: id,
      eventIds: input.eventIds,
      replyMessageIds: recovering?.replyMessageIds ?? [],
    };
    if (recovering?.delivered) inflight.delivered = recovering.delivered;
    const log = this.deps.logger.child({ conversation: conversation.key, turn: id });
    if (recovering) log.warn({ events: input.eventIds }, 'resuming a turn interrupted by a restart');
    const adapter = this.adapterFor(input.target.address.platform);
    const reply = new TurnReply(
      adapter,
      input.target,
      {
        resume: [...inflight.replyMessageIds],
        onMessageCreated: async (messageId) => {
          inflight.replyMessageIds.push(messageId);
          await store.conversations.setInflight(conversation.id, inflight);
        },
      },
      log,
    );
    const turn: Turn = {
      id,
      conversation,
      adapter,
      target: input.target,
      requester: input.requester,
      isDirect: input.isDirect,
      eventIds: input.eventIds,
      inflight,
      reply,
      observer: this.deps.observer.startTurn({
        turnId: id,
        conversationKey: conversation.key,
        platform: input.target.address.platform,
        userId: input.requester.id,
        trigger: input.trigger,
      }),
      log,
      signal: input.signal,
      usage: { promptTokens: 0, completionTokens: 0, tokenScale: conversation.tokenScale },
    };
    await store.conversations.setInflight(conversation.id, inflight);
    return turn;
  }

  /** Answers a batch of messages of one conversation (queued while it was busy) with one reply. */
  async runMessages(
    conversationKey: string,
    eventIds: number[],
    messages: InboundMessage[],
    signal: AbortSignal,
  ) {
    const last = messages.at(-1);
    if (!last) return;
    const turn = await this.begin({
      conversationKey,
      eventIds,
      target: { address: last.address, replyTo: last.messageId, userId: last.user.id },
      requester: last.user,
      isDirect: last.isDirect,
      trigger: 'message',
      signal,
    });
    if (turn.inflight.delivered) return this.redeliver(turn);
    const clearStatus = await turn.adapter.showWorking(turn.target).catch(() => async () => {});
    try {
      const pending = await this.newTurnMessages(turn, messages);
      await this.converse(turn, pending);
    } finally {
      await clearStatus().catch(() => {});
    }
  }

  /** Continues a parked turn after its approval was decided or expired. */
  async runResume(eventId: number, approval: ApprovalRecord, signal: AbortSignal) {
    const address = decodeConversationKey(approval.conversationKey);
    const turn = await this.begin({
      conversationKey: approval.conversationKey,
      eventIds: [eventId],
      target: {
        address,
        ...(approval.resume.replyTo ? { replyTo: approval.resume.replyTo } : {}),
        userId: approval.requestedBy.id,
      },
      requester: approval.requestedBy,
      isDirect: approval.resume.isDirect ?? false,
      trigger: 'resume',
      signal,
    });
    if (turn.inflight.delivered) return this.redeliver(turn);
    if (approval.status === 'expired' && approval.cardMessageId) {
      await turn.adapter
        .updateApprovalCard(address, approval.cardMessageId, this.deps.approvals.card(approval))
        .catch((error: unknown) =>
          turn.log.warn({ err: error, approvalId: approval.id }, 'could not mark the card expired'),
        );
    }
    const scope = this.toolScope(turn);
    const decided = await resolveApprovedCall(scope, approval);
    const { assistant } = approval.resume;
    const resolution = await resolveToolCalls(scope, assistant.toolCalls, approval.resume.pendingIndex + 1, [
      ...approval.resume.results,
      decided,
    ]);
    if (resolution.status === 'needs_approval') return this.park(turn, [], assistant, resolution);
    await this.converse(turn, [
      { role: 'assistant', content: assistant.content, toolCalls: assistant.toolCalls },
      ...resolution.results.map((result) => ({ role: 'tool' as const, ...result })),
    ]);
  }

  /** Posts cards of pending approvals that a crash kept from being shown. */
  async postMissingCards(olderThan: Date): Promise<void> {
    for (const approval of await this.deps.store.approvals.listWithoutCard(olderThan)) {
      const address = decodeConversationKey(approval.conversationKey);
      await this.postCard(
        this.adapterFor(address.platform),
        {
          address,
          ...(approval.resume.replyTo ? { replyTo: approval.resume.replyTo } : {}),
          userId: approval.requestedBy.id,
        },
        approval,
        this.deps.logger,
      );
    }
  }

  private toolScope(turn: Turn): ToolScope {
    return {
      store: this.deps.store,
      tools: this.deps.tools,
      policy: this.deps.policy,
      conversationKey: turn.conversation.key,
      address: turn.target.address,
      requester: turn.requester,
      observer: turn.observer,
      logger: turn.log,
      signal: turn.signal,
    };
  }

  private async newTurnMessages(turn: Turn, messages: InboundMessage[]): Promise<ConversationMessage[]> {
    const window = await this.deps.store.conversations.window(turn.conversation.id);
    const isNew = window.length === 0 && !turn.conversation.summary;
    const pending: ConversationMessage[] = [];
    for (const [index, original] of messages.entries()) {
      let message = original;
      if (turn.adapter.prepare) {
        try {
          const prepared = await turn.adapter.prepare(original, { newConversation: isNew && index === 0 });
          message = prepared.message;
          if (prepared.threadContext?.length) {
            const lines = prepared.threadContext.map(
              (entry) => `${entry.fromButler ? 'Butler' : entry.user}: ${entry.text}`,
            );
            pending.push({
              role: 'user',
              content: `(Earlier messages in this thread, for context)\n${lines.join('\n')}`,
            });
          }
        } catch (error) {
          turn.log.warn({ err: error }, 'could not prepare the message; using it as received');
        }
      }
      const author = message.isDirect ? undefined : (message.user.name ?? message.user.id);
      pending.push(
        author ? { role: 'user', content: message.text, author } : { role: 'user', content: message.text },
      );
    }
    return pending;
  }

  private async systemPrompt(turn: Turn): Promise<string> {
    const { store, options } = this.deps;
    const address = turn.target.address;
    const memories = await store.memories.top(
      { platform: address.platform, workspace: address.workspace, userId: turn.requester.id },
      options.memoriesInPrompt,
    );
    const pendingApprovals = (await store.approvals.listPending(turn.conversation.key)).map(
      (approval) =>
        `- ${approval.toolName}: ${approval.summary} (requested by ${approval.requestedBy.name ?? approval.requestedBy.id})`,
    );
    return buildSystemPrompt({
      operatorPrompt: options.systemPrompt,
      address,
      isDirect: turn.isDirect,
      now: new Date(),
      memories,
      pendingApprovals,
    });
  }

  /** The model loop: call the model, run or park tool calls, until it answers or the step budget ends. */
  private async converse(turn: Turn, pending: ConversationMessage[]): Promise<void> {
    const { model, brain, tools, options } = this.deps;
    if (!model) {
      await turn.reply.append(noModelMessage);
      return this.complete(turn, pending, undefined);
    }
    try {
      const systemPrompt = await this.systemPrompt(turn);
      let window: StoredMessage[] | undefined;
      for (let step = 0; step < options.maxSteps; step++) {
        const prompt = await brain.prepare({
          conversation: turn.conversation,
          systemPrompt,
          pending,
          observer: turn.observer,
          allowCompaction: step === 0,
          ...(window ? { window } : {}),
        });
        window = prompt.window;
        const result = await model.complete({
          messages: prompt.messages,
          tools: tools.definitions(),
          signal: turn.signal,
          onText: (delta) => turn.reply.append(delta),
        });
        turn.observer.generation({
          name: 'chat',
          model: result.model,
          startTime: result.startTime,
          endTime: result.endTime,
          ...(result.firstTokenTime ? { firstTokenTime: result.firstTokenTime } : {}),
          input: prompt.messages,
          output:
            result.toolCalls.length > 0
              ? { content: result.content, toolCalls: result.toolCalls }
              : result.content,
          ...(result.usage ? { usage: result.usage } : {}),
        });
        turn.usage.promptTokens += result.usage?.promptTokens ?? 0;
        turn.usage.completionTokens += result.usage?.completionTokens ?? 0;
        turn.usage.tokenScale = brain.calibrate(turn.conversation, prompt.rawTokens, result.usage);
        if (result.toolCalls.length === 0) return await this.complete(turn, pending, result.content);

        turn.reply.endStep();
        const assistant = { content: result.content, toolCalls: result.toolCalls };
        const resolution = await resolveToolCalls(this.toolScope(turn), result.toolCalls, 0, []);
        if (resolution.status === 'needs_approval')
          return await this.park(turn, pending, assistant, resolution);
        pending.push(
          { role: 'assistant', ...assistant },
          ...resolution.results.map((entry) => ({ role: 'tool' as const, ...entry })),
        );
      }
      await turn.reply.append(
        `I stopped after ${options.maxSteps} steps without finishing. Tell me to continue if you want me to keep going.`,
      );
      await this.complete(turn, pending, undefined);
    } catch (error) {
      if (turn.signal.aborted)
        throw new TurnInterruptedError('turn interrupted by shutdown', { cause: error });
      await this.fail(turn, pending, error);
    }
  }

  /** Delivers the full reply, then commits the turn. `finalContent` is the last model answer. */
  private async complete(turn: Turn, pending: ConversationMessage[], finalContent: string | undefined) {
    if (turn.reply.shown.trim().length === 0)
      await turn.reply.append("I don't have anything to add to that.");
    const messages: ConversationMessage[] = [
      ...pending,
      { role: 'assistant', content: finalContent?.trim() ? finalContent : turn.reply.shown },
    ];
    turn.inflight.delivered = { text: turn.reply.shown, messages };
    await this.deps.store.conversations.setInflight(turn.conversation.id, turn.inflight);
    await turn.reply.finish();
    await this.commit(turn, messages, 'done');
    turn.observer.end({ status: 'replied' });
  }

  /** A restarted turn whose reply was complete: make sure it is fully shown, then commit it. */
  private async redeliver(turn: Turn) {
    const delivered = turn.inflight.delivered;
    if (!delivered) return;
    await turn.reply.finish(delivered.text);
    await this.commit(turn, delivered.messages, 'done');
    turn.observer.end({ status: 'replied' });
  }

  /** Stops the turn at a call that needs a person's decision: persist, then show the card. */
  private async park(
    turn: Turn,
    pending: ConversationMessage[],
    assistant: {
      content: string;
      toolCalls: NonNullable<Extract<ConversationMessage, { role: 'assistant' }>['toolCalls']>;
    },
    resolution: Extract<Resolution, { status: 'needs_approval' }>,
  ) {
    const { store, approvals, options } = this.deps;
    if (turn.reply.opened) await turn.reply.finish();
    const call = assistant.toolCalls[resolution.index];
    if (!call) throw new Error('parked on a missing tool call');
    const approval = await store.transaction(async (tx) => {
      const created = await tx.approvals.create(
        approvals.newApproval({
          conversationKey: turn.conversation.key,
          platform: turn.target.address.platform,
          toolName: resolution.tool.name,
          toolCallId: call.id,
          arguments: resolution.input,
          risk: resolution.tool.risk,
          summary: resolution.tool.summarize(resolution.input),
          requestedBy: turn.requester,
          expiresAt: new Date(Date.now() + options.approvalTtlMs),
          resume: {
            turnId: turn.id,
            assistant,
            results: resolution.results,
            pendingIndex: resolution.index,
            isDirect: turn.isDirect,
            ...(turn.target.replyTo ? { replyTo: turn.target.replyTo } : {}),
          },
        }),
      );
      await this.commitWith(tx, turn, pending, 'done');
      return created;
    });
    turn.log.info(
      { approvalId: approval.id, tool: approval.toolName, risk: approval.risk },
      'turn parked for approval',
    );
    turn.observer.approvalRequested({
      approvalId: approval.id,
      conversationKey: approval.conversationKey,
      toolName: approval.toolName,
      risk: approval.risk,
    });
    turn.observer.end({ status: 'parked' });
    await this.postCard(turn.adapter, turn.target, approval, turn.log);
  }

  private async postCard(adapter: ChatAdapter, target: ReplyTarget, approval: ApprovalRecord, log: Logger) {
    try {
      const messageId = await adapter.postApprovalCard(target, this.deps.approvals.card(approval));
      await this.deps.store.approvals.setCardMessage(approval.id, messageId);
    } catch (error) {
      log.error({ err: error, approvalId: approval.id }, 'could not post the approval card');
      await adapter
        .postNotice(
          target,
          `I need approval to run ${approval.toolName}, but could not show the approval card. Please try again.`,
        )
        .catch(() => {});
    }
  }

  /** Ends a failed turn with a message to the user; what completed (the user's words, finished tool steps) is kept. */
  private async fail(turn: Turn, pending: ConversationMessage[], error: unknown) {
    const userMessage = error instanceof ModelError ? error.userMessage : failureMessage;
    turn.log.error({ err: error, code: error instanceof ModelError ? error.code : undefined }, 'turn failed');
    try {
      if (turn.reply.opened) await turn.reply.finish(`${turn.reply.shown}\n\n⚠️ ${userMessage}`);
      else await turn.adapter.postNotice(turn.target, `⚠️ ${userMessage}`);
    } catch (deliveryError) {
      turn.log.error({ err: deliveryError }, 'could not tell the user about the failure');
    }
    await this.commit(turn, pending, 'failed', error instanceof Error ? error.message : String(error));
    turn.observer.end({ status: 'failed', error: userMessage });
  }

  private commit(
    turn: Turn,
    messages: readonly ConversationMessage[],
    outcome: InboxOutcome,
    error?: string,
  ) {
    return this.deps.store.transaction((tx) => this.commitWith(tx, turn, messages, outcome, error));
  }

  private async commitWith(
    tx: Store,
    turn: Turn,
    messages: readonly ConversationMessage[],
    outcome: InboxOutcome,
    error?: string,
  ) {
    await tx.conversations.append(turn.conversation.id, withTokens(messages));
    await tx.conversations.setInflight(turn.conversation.id, null);
    await tx.conversations.recordUsage(turn.conversation.id, turn.usage);
    await tx.inbox.finish(turn.eventIds, outcome, error);
  }
}
