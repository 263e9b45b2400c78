import { routedStep } from '../agents/router.js';
import type { TurnOutcome } from '../contracts/adapter.js';
import type { ConnectionWaitRecord } from '../contracts/connection-records.js';
import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { ChatUser, InboundMessage } from '../contracts/events.js';
import type { ParkedInputWait } from '../contracts/input-waits.js';
import { type ConversationMessage, keptMessages, type ToolCall } from '../contracts/messages.js';
import type { ApprovalRecord, ResumeState } from '../contracts/store.js';
import {
  type Resolution,
  resolveToolCalls,
  type ToolResult,
  type ToolScope,
  waitingApprovals,
} from '../tool-calls/index.js';
import { BackgroundWork } from './background-work.js';
import { endedByBudget, isBudgetOverride, overrideDecided } from './budget-gate.js';
import { answerCommand } from './commands.js';
import { connectionLapsed, parkForConnection } from './connection-park.js';
import { addTokens, resumeAgents } from './delegation.js';
import { grantOf, incomingMessages, requestersOf } from './incoming.js';
import { inputContinued, parkForInput } from './input-park.js';
import {
  beginTurn,
  type Continued,
  reportTurnEvent,
  type Turn,
  TurnInterruptedError,
  type TurnRunnerDeps,
  toolMessages,
} from './turn.js';
import { TurnChores } from './turn-chores.js';
import { completeTurn, failTurn, parkTurn, redeliverTurn, stopTurn } from './turn-endings.js';
import { systemPromptOf, toolScopeOf } from './turn-scope.js';

/**
 * Runs turns: a batch of new messages, or the continuation after an approval decision. A turn's
 * messages reach the database in one transaction at its end (with its inbox events marked done),
 * so a crash never leaves the conversation half-written; `inflight` on the conversation records
 * what was already posted so a retried turn overwrites its reply instead of posting a second one.
 */

type AssistantStep = { content: string; toolCalls: ToolCall[] };

const noModelMessage =
  'Butler has no model configured yet. An admin can set BUTLER_MODEL (and BUTLER_BASE_URL, BUTLER_API_TOKEN) to turn on answers.';

export class TurnRunner {
  /** Cosmetic platform calls turns left behind (statuses, indicators): nothing waits on them but `whenIdle`. */
  readonly background = new BackgroundWork();
  /** What the sweep does for turns. */
  readonly chores: TurnChores;

  constructor(private readonly deps: TurnRunnerDeps) {
    this.chores = new TurnChores(deps);
  }

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
      grant: grantOf(this.deps, messages),
    });
    if (turn.inflight.delivered) {
      await this.released(turn, redeliverTurn(this.deps, turn));
      return 'replied';
    }
    const { window } = turn.opening;
    turn.session.start({ requester: turn.requester, text: first.text, firstTurn: window.length === 0 });
    turn.working.start();
    if (schedule) await reportTurnEvent(turn, { type: 'run', scheduleId: schedule.id, prompt: last.text });
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
    // The continuation's reply came after the card (or, without one, after the question).
    const turn = await this.beginContinuation(
      eventId,
      first,
      signal,
      retried,
      first.cardMessageId ?? undefined,
    );
    if (!turn) return;
    if (first.cardMessageId) {
      // Expiry has no click to redraw the card, and a click's own redraw is lost if Butler dies right
      // after storing the decision: the continuation makes sure the card shows the outcome.
      await turn.adapter
        .updateApprovalCard(address, first.cardMessageId, this.deps.approvals.card(batch))
        .catch((error: unknown) =>
          turn.log.warn({ err: error, batchId: first.batchId }, 'could not show the outcome on the card'),
        );
    }
    await this.continueStep(turn, resume, async (scope) => {
      if (isBudgetOverride(batch)) {
        if (await overrideDecided(this.deps, turn, scope, first)) await this.converse(turn, []);
        return undefined;
      }
      const decided: ToolResult[] = [];
      const parked = await resumeAgents(turn, scope, resume.agents ?? [], batch, decided);
      return { decided, parked, approvals: batch.filter((entry) => !entry.agent) };
    });
  }

  /**
   * Continues a turn parked until someone connected an account: its waiting calls are resolved again (they
   * run as that person now, or wait for a card), or, when the wait expired, answered with why they did not run.
   */
  async runConnectionResume(
    eventId: number,
    wait: ConnectionWaitRecord,
    signal: AbortSignal,
    retried = false,
  ) {
    const turn = await this.beginContinuation(eventId, wait, signal, retried, undefined);
    if (!turn) return;
    const { resume } = wait;
    await this.continueStep(turn, resume, async (scope) => {
      // A process that has not seen the server's tools yet reads the list the connection stored.
      await turn.profile.tools.settled();
      const approvals = await waitingApprovals(this.deps.store, resume.approved ?? []);
      if (wait.status === 'expired') return connectionLapsed(scope, wait, approvals);
      const decided: ToolResult[] = [];
      const parked = await resumeAgents(turn, scope, resume.agents ?? [], [], decided);
      return { decided, parked, approvals };
    });
  }

  /** Continues a turn parked on a server's question: the call is made again with the answers (cancel if none came). */
  async runInputResume(eventId: number, wait: ParkedInputWait, signal: AbortSignal, retried = false) {
    const turn = await this.beginContinuation(eventId, wait, signal, retried, undefined);
    if (!turn) return;
    await this.continueStep(turn, wait.resume, (scope) => inputContinued(turn, scope, this.deps, wait));
  }

  private async beginContinuation(
    eventId: number,
    parked: { conversationKey: string; requestedBy: ChatUser; requesters: ChatUser[]; resume: ResumeState },
    signal: AbortSignal,
    retried: boolean,
    shownAfter: string | undefined,
  ): Promise<Turn | undefined> {
    const { resume } = parked;
    const turn = await beginTurn(this.deps, {
      conversationKey: parked.conversationKey,
      eventIds: [eventId],
      target: {
        address: decodeConversationKey(parked.conversationKey),
        ...(resume.replyTo ? { replyTo: resume.replyTo } : {}),
        userId: parked.requestedBy.id,
      },
      requesters: parked.requesters,
      isDirect: resume.isDirect ?? false,
      trigger: 'resume',
      scheduleId: resume.scheduleId,
      signal,
      retriedAfter: retried ? (shownAfter ?? resume.replyTo) : undefined,
      shownBefore: resume.replyMessageIds ?? [],
    });
    if (turn.inflight.delivered) {
      await this.released(turn, redeliverTurn(this.deps, turn));
      return undefined;
    }
    if (resume.overBudget) turn.overBudget = true;
    return turn;
  }

  /**
   * The parked step goes on: `decide` gives what became of the calls it waited for (undefined: it ended the
   * turn itself), the rest are resolved as in any step, and the model is called again with all results.
   */
  private async continueStep(
    turn: Turn,
    resume: ResumeState,
    decide: (scope: ToolScope) => Promise<Continued | undefined>,
  ): Promise<void> {
    turn.session.start({ requester: turn.requester, firstTurn: false });
    turn.working.start();
    try {
      // The step that parked was the model's, after whatever it had read: treat it as steerable.
      const scope = toolScopeOf(this.deps, turn, true);
      const outcome = await decide(scope);
      if (!outcome) return;
      const { assistant } = resume;
      // Batches leave nothing else; a turn parked before batches still has the calls after its one.
      const resolution = await resolveToolCalls(
        outcome.answers ? { ...scope, answers: outcome.answers } : scope,
        assistant.toolCalls,
        [...resume.results, ...outcome.decided],
        outcome.parked,
        outcome.approvals ?? [],
      );
      if (await this.park(turn, [], assistant, resolution)) return;
      await this.converse(turn, [
        { role: 'assistant', content: assistant.content, toolCalls: assistant.toolCalls },
        ...toolMessages(assistant.toolCalls, resolution.results),
      ]);
    } finally {
      this.endCosmetics(turn);
      await turn.stop?.release();
    }
  }

  /** Parks the turn when the step's calls wait for a decision or a connection; false when they are done. */
  private async park(
    turn: Turn,
    pending: ConversationMessage[],
    assistant: AssistantStep,
    resolution: Resolution,
  ): Promise<boolean> {
    if (resolution.status === 'needs_approval')
      await parkTurn(this.deps, turn, pending, assistant, resolution);
    else if (resolution.status === 'needs_connection')
      await parkForConnection(this.deps, turn, pending, assistant, resolution);
    else if (resolution.status === 'needs_input')
      await parkForInput(this.deps, turn, pending, assistant, resolution);
    else return false;
    return true;
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

  /** Runs or parks a step's tool calls: true when the turn parked, else the step joins `pending`. */
  private async resolveStep(turn: Turn, pending: ConversationMessage[], assistant: AssistantStep) {
    const afterToolOutput = pending.some((message) => message.role === 'tool');
    const resolution = await resolveToolCalls(
      toolScopeOf(this.deps, turn, afterToolOutput),
      assistant.toolCalls,
      [],
    );
    if (await this.park(turn, pending, assistant, resolution)) return true;
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
      const systemPrompt = systemPromptOf(this.deps, turn, routed.note);
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
          // Traces keep what the history keeps: a search's results are the asker's alone.
          input: keptMessages(prompt.messages),
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
