import { routedStep } from '../agents/router.js';
import { buildSystemPrompt } from '../brain/prompt.js';
import type { TurnOutcome } from '../contracts/adapter.js';
import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { InboundMessage } from '../contracts/events.js';
import type { ConversationMessage, ToolCall } from '../contracts/messages.js';
import type { ApprovalRecord } from '../contracts/store.js';
import type { Files } from '../files/index.js';
import {
  approvedCall,
  inCallOrder,
  resolveApprovedCall,
  resolveToolCalls,
  type ToolResult,
  type ToolScope,
} from '../tool-calls/index.js';
import { BackgroundWork } from './background-work.js';
import { endedByBudget, isBudgetOverride, overrideDecided } from './budget-gate.js';
import { answerCommand } from './commands.js';
import { addTokens, resumeAgents, turnBinding } from './delegation.js';
import { incomingMessages, requestersOf } from './incoming.js';
import {
  adapterFor,
  beginTurn,
  reportTurnEvent,
  type Turn,
  TurnInterruptedError,
  type TurnRunnerDeps,
} from './turn.js';
import {
  completeTurn,
  failTurn,
  parkTurn,
  postApprovalCard,
  redeliverTurn,
  stopTurn,
} from './turn-endings.js';

/**
 * Runs turns: a batch of new messages, or the continuation after an approval decision. A turn's
 * messages reach the database in one transaction at its end (with its inbox events marked done),
 * so a crash never leaves the conversation half-written; `inflight` on the conversation records
 * what was already posted so a retried turn overwrites its reply instead of posting a second one.
 */

/** The tool messages of a step, in the order of its calls. */
const toolMessages = (calls: readonly ToolCall[], results: readonly ToolResult[]): ConversationMessage[] =>
  inCallOrder(calls, results).map((result) => ({ role: 'tool', ...result }));

type AssistantStep = { content: string; toolCalls: ToolCall[] };

const noModelMessage =
  'Butler has no model configured yet. An admin can set BUTLER_MODEL (and BUTLER_BASE_URL, BUTLER_API_TOKEN) to turn on answers.';

export class TurnRunner {
  /** Cosmetic platform calls turns left behind (statuses, indicators): nothing waits on them but `whenIdle`. */
  readonly background = new BackgroundWork();

  constructor(private readonly deps: TurnRunnerDeps) {}

  /**
   * Answers a batch of messages of one conversation (queued while it was busy) with one reply, and says how
   * the turn ended. `retried`: the events were claimed before by a process that died before finishing them.
   */
  async runMessages(
    conversationKey: string,
    eventIds: number[],
    messages: InboundMessage[],
    signal: AbortSignal,
    retried = false,
  ): Promise<TurnOutcome | undefined> {
    const last = messages.at(-1);
    const first = messages[0];
    if (!last || !first) return undefined;
    // A scheduled run answers no platform message: it replies under its task's anchor, or in the thread.
    const { schedule } = last;
    const replyTo = schedule ? schedule.anchor : last.messageId;
    const turn = await beginTurn(this.deps, {
      conversationKey,
      eventIds,
      target: {
        address: last.address,
        ...(replyTo ? { replyTo } : {}),
        // A run that asks as someone of another platform (an API key's task) answers no one of this one.
        userId: last.user.platform && last.user.platform !== last.address.platform ? '' : last.user.id,
        ...(last.user.team ? { userTeam: last.user.team } : {}),
        messageIds: messages.map((message) => message.messageId),
      },
      requesters: requestersOf(this.deps.policy.people, messages),
      isDirect: last.isDirect,
      trigger: 'message',
      scheduleId: schedule?.id,
      signal,
      // The interrupted reply came after the earliest message it answered (a run's: after its anchor).
      retriedAfter: retried ? (schedule ? schedule.anchor : first.messageId) : undefined,
    });
    if (turn.inflight.delivered) {
      await this.released(turn, redeliverTurn(this.deps, turn));
      return 'replied';
    }
    const { window } = turn.opening;
    turn.session.start({ requester: turn.requester, text: first.text, firstTurn: window.length === 0 });
    turn.working.start();
    try {
      const { pending, notice } = await incomingMessages(this.deps, turn, messages, window.length === 0);
      if (notice) await turn.reply.append(notice);
      // Commands (`revoke`, `usage`) are answered without the model.
      const answer = await answerCommand(this.deps, turn, last.text);
      if (answer !== undefined) {
        await turn.reply.append(answer);
        await completeTurn(this.deps, turn, pending, answer);
      } else {
        await this.converse(turn, pending, { route: true });
      }
      return turn.session.ending;
    } finally {
      this.endCosmetics(turn);
      await turn.stop?.release();
    }
  }

  /** Continues a parked turn once every call on its card was decided or expired. */
  async runResume(eventId: number, batch: readonly ApprovalRecord[], signal: AbortSignal, retried = false) {
    const [first] = batch;
    if (!first) return;
    const { resume } = first;
    const address = decodeConversationKey(first.conversationKey);
    const turn = await beginTurn(this.deps, {
      conversationKey: first.conversationKey,
      eventIds: [eventId],
      target: {
        address,
        ...(resume.replyTo ? { replyTo: resume.replyTo } : {}),
        userId: first.requestedBy.id,
      },
      requesters: first.requesters,
      isDirect: resume.isDirect ?? false,
      trigger: 'resume',
      scheduleId: resume.scheduleId,
      signal,
      // The continuation's reply came after the card (or, without one, after the question).
      retriedAfter: retried ? (first.cardMessageId ?? resume.replyTo) : undefined,
      shownBefore: resume.replyMessageIds ?? [],
    });
    if (turn.inflight.delivered) return this.released(turn, redeliverTurn(this.deps, turn));
    if (resume.overBudget) turn.overBudget = true;
    if (first.cardMessageId) {
      // Expiry has no click to redraw the card, and a click's own redraw is lost if Butler dies right
      // after storing the decision: the continuation makes sure the card shows the outcome.
      await turn.adapter
        .updateApprovalCard(address, first.cardMessageId, this.deps.approvals.card(batch))
        .catch((error: unknown) =>
          turn.log.warn({ err: error, batchId: first.batchId }, 'could not show the outcome on the card'),
        );
    }
    turn.session.start({ requester: turn.requester, firstTurn: false });
    turn.working.start();
    try {
      // The step that parked was the model's, after whatever it had read: treat it as steerable.
      const scope = this.toolScope(turn, true);
      if (isBudgetOverride(batch)) {
        if (await overrideDecided(this.deps, turn, scope, first)) await this.converse(turn, []);
        return;
      }
      const { assistant } = resume;
      const decided: ToolResult[] = [];
      for (const approval of batch.filter((entry) => !entry.agent))
        decided.push(await resolveApprovedCall(scope, approval, approvedCall(approval, assistant)));
      const parked = await resumeAgents(turn, scope, batch, decided);
      // Batches leave nothing else; a turn parked before batches still has the calls after its one.
      const resolution = await resolveToolCalls(
        scope,
        assistant.toolCalls,
        [...resume.results, ...decided],
        parked,
      );
      if (resolution.status === 'needs_approval')
        return await parkTurn(this.deps, turn, [], assistant, resolution);
      await this.converse(turn, [
        { role: 'assistant', content: assistant.content, toolCalls: assistant.toolCalls },
        ...toolMessages(assistant.toolCalls, resolution.results),
      ]);
    } finally {
      this.endCosmetics(turn);
      await turn.stop?.release();
    }
  }

  /**
   * The working indicator goes and the platform hears how the turn ended, in the background: the worker slot
   * and the end of the turn never wait for a status call.
   */
  private endCosmetics(turn: Turn): void {
    const indicatorGone = turn.working.clear();
    this.background.add(indicatorGone.then(() => turn.session.close()));
  }

  /** Waits for `work` on a turn that began; then the turn is no longer watched for stop requests. */
  private async released(turn: Turn, work: Promise<void>): Promise<void> {
    try {
      await work;
    } finally {
      await turn.stop?.release();
    }
  }

  /** Posts the cards of batches that a crash kept from being shown. */
  async postMissingCards(olderThan: Date): Promise<void> {
    const batches = new Map<string, ApprovalRecord[]>();
    for (const approval of await this.deps.store.approvals.listWithoutCard(olderThan))
      batches.set(approval.batchId, [...(batches.get(approval.batchId) ?? []), approval]);
    for (const batch of batches.values()) {
      const [first] = batch;
      if (!first) continue;
      const address = decodeConversationKey(first.conversationKey);
      // Another process serving that platform posts it (the same sweep runs there).
      if (!this.deps.adapters.has(address.platform)) continue;
      await postApprovalCard(
        this.deps,
        adapterFor(this.deps, address.platform),
        {
          address,
          ...(first.resume.replyTo ? { replyTo: first.resume.replyTo } : {}),
          userId: first.requestedBy.id,
        },
        batch,
        this.deps.logger,
      );
    }
  }

  /** Sends the files a call produced into the turn's conversation, where its reply goes. */
  private fileSender(turn: Turn, files: Files): NonNullable<ToolScope['deliverFiles']> {
    return (callId, produced, origin) =>
      files.delivery.deliver(
        {
          adapter: turn.adapter,
          target: turn.target,
          conversationKey: turn.conversation.key,
          ...(files.publicUrl ? { publicUrl: files.publicUrl } : {}),
          logger: turn.log,
        },
        // The provider's call id is unique only within a turn (some servers number calls call_0, call_1 …):
        // keyed by the turn's first inbox event too, a retry of the turn finds its files, another turn does not.
        { callId: `${turn.eventIds[0] ?? turn.id}:${callId}`, origin, files: produced },
      );
  }

  private toolScope(turn: Turn, afterToolOutput: boolean): ToolScope {
    const { delegator, tools, name: profile } = turn.profile;
    return {
      ...(delegator ? { delegation: delegator.forTurn(turnBinding(turn)) } : {}),
      store: this.deps.store,
      tools,
      policy: this.deps.policy,
      approvals: this.deps.approvals,
      conversationKey: turn.conversation.key,
      address: turn.target.address,
      requester: turn.requester,
      requesters: turn.requesters,
      ...(turn.target.replyTo ? { replyTo: turn.target.replyTo } : {}),
      isDirect: turn.isDirect,
      ...(turn.scheduleId ? { scheduleId: turn.scheduleId } : {}),
      ...(profile ? { profile } : {}),
      afterToolOutput,
      observer: turn.observer,
      logger: turn.log,
      signal: turn.signal,
      report: (event) => reportTurnEvent(turn, event),
      ...(this.deps.files ? { deliverFiles: this.fileSender(turn, this.deps.files) } : {}),
    };
  }

  private systemPrompt(turn: Turn, note?: string): string {
    const { memories, pendingApprovals: pending } = turn.opening;
    const pendingApprovals = pending.map(
      (approval) =>
        `- ${approval.toolName}: ${approval.summary} (requested by ${approval.requestedBy.name ?? approval.requestedBy.id})`,
    );
    const prompt = buildSystemPrompt({
      operatorPrompt: this.deps.options.systemPrompt,
      channelInstructions: turn.profile.instructions,
      address: turn.target.address,
      isDirect: turn.isDirect,
      now: new Date(),
      timezone: turn.requester.timezone,
      scheduled: turn.scheduleId !== undefined,
      memories,
      pendingApprovals,
    });
    return note ? `${prompt}\n\n${note}` : prompt;
  }

  /** Runs or parks a step's tool calls: true when the turn parked, else the step joins `pending`. */
  private async resolveStep(turn: Turn, pending: ConversationMessage[], assistant: AssistantStep) {
    const afterToolOutput = pending.some((message) => message.role === 'tool');
    const resolution = await resolveToolCalls(this.toolScope(turn, afterToolOutput), assistant.toolCalls, []);
    if (resolution.status === 'needs_approval') {
      await parkTurn(this.deps, turn, pending, assistant, resolution);
      return true;
    }
    pending.push(
      { role: 'assistant', ...assistant },
      ...toolMessages(assistant.toolCalls, resolution.results),
    );
    return false;
  }

  /** With routing on, the decision for a new turn: a delegation done first, or a note for the prompt. */
  private async route(turn: Turn, pending: ConversationMessage[]) {
    const { router } = turn.profile;
    if (!router) return { parked: false };
    const route = await router.route({
      conversationKey: turn.conversation.key,
      turnId: turn.id,
      messages: [...turn.opening.window, ...pending],
      signal: turn.signal,
      observer: turn.observer,
      logger: turn.log,
      addUsage: (usage) => addTokens(turn, usage),
    });
    if (route.action === 'delegated')
      return { parked: await this.resolveStep(turn, pending, routedStep(route)) };
    return { parked: false, ...(route.action !== 'fallback' && route.note ? { note: route.note } : {}) };
  }

  /** The model loop: call the model, run or park tool calls, until it answers or the step budget ends. */
  private async converse(
    turn: Turn,
    pending: ConversationMessage[],
    options: { route?: boolean } = {},
  ): Promise<void> {
    const { brain, files } = this.deps;
    const { model, delegator, tools } = turn.profile;
    const { maxSteps } = this.deps.options;
    if (!model) {
      await turn.reply.append(noModelMessage);
      return completeTurn(this.deps, turn, pending, undefined);
    }
    try {
      if (await endedByBudget(this.deps, turn, pending)) return;
      const routed = options.route ? await this.route(turn, pending) : { parked: false };
      if (routed.parked) return;
      const systemPrompt = this.systemPrompt(turn, routed.note);
      let history = turn.opening.window;
      for (let step = 0; step < maxSteps; step++) {
        const prompt = await brain.prepare({
          conversation: turn.conversation,
          systemPrompt,
          pending,
          observer: turn.observer,
          allowCompaction: step === 0,
          window: history,
        });
        history = prompt.window;
        if (prompt.compaction) turn.usage.compaction = prompt.compaction;
        const result = await model.complete({
          // Shared files' content goes to the model only, not into traces.
          messages: files ? await files.prompt.expand(prompt.messages) : prompt.messages,
          tools: delegator ? delegator.withDelegate(tools.definitions()) : tools.definitions(),
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
        if (result.toolCalls.length === 0)
          return await completeTurn(this.deps, turn, pending, result.content);

        turn.reply.endStep();
        if (await this.resolveStep(turn, pending, { content: result.content, toolCalls: result.toolCalls }))
          return;
      }
      await turn.reply.append(
        `I stopped after ${maxSteps} steps without finishing. Tell me to continue if you want me to keep going.`,
      );
      await completeTurn(this.deps, turn, pending, undefined);
    } catch (error) {
      const stoppedBy = turn.stop?.stoppedBy;
      if (stoppedBy) return await stopTurn(this.deps, turn, pending, stoppedBy);
      if (turn.signal.aborted)
        throw new TurnInterruptedError('turn interrupted by shutdown', { cause: error });
      await failTurn(this.deps, turn, pending, error);
    }
  }
}
