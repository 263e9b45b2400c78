import type { ChatAdapter, TurnOutcome } from '../contracts/adapter.js';
import type { InboundMessage, Platform } from '../contracts/events.js';
import { isParked } from '../contracts/input-waits.js';
import type { Logger } from '../contracts/logger.js';
import type { InboxEvent, Store } from '../contracts/store.js';
import { TurnInterruptedError } from '../turn/turn.js';
import type { TurnRunner } from '../turn/turn-runner.js';

/**
 * What a claimed conversation's events become: turns. Runs of messages are answered together, each
 * approval continuation on its own; events that crashed the process too often are given up on with an
 * apology, and messages past a sender's per-minute allowance get one polite notice instead of a turn.
 */

/** Hears how each scheduled run's turn ended (the schedules room counts failures in a row). */
export interface ScheduledRunListener {
  runEnded(run: { id: string; slot: string }, outcome: TurnOutcome): Promise<void>;
  /** The task's creator may no longer talk to Butler where it runs: the task pauses, and an admin is told. */
  creatorNotAllowed(run: { id: string; slot: string }): Promise<void>;
}

/** Sends a waiting request's card to the people a reminder or an escalation is for. */
export interface NoticeDelivery {
  deliver(batchId: string, stage: 'reminder' | 'escalation'): Promise<void>;
}

/** Work beside turns that the inbox carries: scheduled runs' outcomes, reminders and escalations. */
export interface DispatchExtras {
  scheduled?: ScheduledRunListener | undefined;
  notices?: NoticeDelivery | undefined;
  /** The access allowlists, asked again as a scheduled run starts (its creator may have been removed since). */
  isAllowed?: ((message: InboundMessage) => boolean) | undefined;
}

export interface DispatchOptions {
  /** A message a user sends beyond this many per minute gets a polite refusal instead of an answer. */
  messagesPerMinute: number;
  /** An event whose turn crashed the process this many times is given up on, with a message. */
  maxAttempts: number;
}

const rateLimitNotice = (limit: number) =>
  `You're sending messages faster than I can answer (${limit} a minute). Please wait a moment and ask again.`;

export class TurnDispatcher {
  constructor(
    private readonly store: Store,
    private readonly runner: TurnRunner,
    private readonly adapters: ReadonlyMap<Platform, ChatAdapter>,
    private readonly options: DispatchOptions,
    private readonly logger: Logger,
    private readonly extras: DispatchExtras = {},
  ) {}

  /** Runs the turns of one conversation's claimed events, in order, until the signal aborts. */
  async dispatch(conversationKey: string, events: readonly InboxEvent[], signal: AbortSignal, log: Logger) {
    for (const group of groupEvents(events)) {
      if (signal.aborted) break;
      await this.runGroup(conversationKey, group, signal, log);
    }
  }

  private async runGroup(conversationKey: string, events: InboxEvent[], signal: AbortSignal, log: Logger) {
    const worn = events.filter((event) => event.attempts > this.options.maxAttempts);
    if (worn.length > 0) {
      log.error({ events: worn.map((event) => event.id) }, 'giving up on events that failed repeatedly');
      await this.store.inbox.finish(
        worn.map((event) => event.id),
        'failed',
        'too many attempts',
      );
      const apology = 'Sorry, I could not process your message. Please try again.';
      await this.notify(worn, apology);
      await this.reportDropped(worn, apology);
      for (const event of worn) await this.runEnded(event, 'failed');
    }
    const live = events.filter((event) => event.attempts <= this.options.maxAttempts);
    const first = live[0];
    if (!first) return;
    try {
      if (first.payload.kind === 'notify') {
        // Inbox work like a turn, so a crash mid-delivery is retried; each person is sent the card once.
        await this.extras.notices?.deliver(first.payload.batchId, first.payload.stage);
        await this.store.inbox.finish([first.id], 'done');
        return;
      }
      if (first.payload.kind === 'resume') {
        const batch = await this.store.approvals.listBatch(first.payload.batchId ?? first.payload.approvalId);
        if (batch.length === 0 || batch.some((approval) => approval.status === 'pending')) {
          await this.store.inbox.finish([first.id], 'done');
          return;
        }
        await this.runner.runResume(first.id, batch, signal, first.attempts > 1);
        return;
      }
      if (first.payload.kind === 'input') {
        const wait = await this.store.inputWaits.get(first.payload.waitId);
        if (!wait || wait.status === 'waiting' || !isParked(wait)) {
          await this.store.inbox.finish([first.id], 'done');
          return;
        }
        await this.runner.runInputResume(first.id, wait, signal, first.attempts > 1);
        return;
      }
      if (first.payload.kind === 'connected') {
        const wait = await this.store.connections.getWait(first.payload.waitId);
        if (!wait || wait.status === 'waiting') {
          await this.store.inbox.finish([first.id], 'done');
          return;
        }
        await this.runner.runConnectionResume(first.id, wait, signal, first.attempts > 1);
        return;
      }
      const messages = await this.withinRateLimit(live);
      if (messages.length === 0) return;
      const outcome = await this.runner.runMessages(
        conversationKey,
        messages.map((entry) => entry.event.id),
        messages.map((entry) => entry.message),
        signal,
        messages.some((entry) => entry.event.attempts > 1),
      );
      await this.runEnded(first, outcome ?? 'interrupted');
    } catch (error) {
      if (error instanceof TurnInterruptedError) throw error;
      // The turn could not even report its own failure (e.g. the database went away): leave the
      // events to be retried after the lease lapses, up to maxAttempts.
      log.error({ err: error, events: live.map((event) => event.id) }, 'turn crashed; will retry');
      throw error;
    }
  }

  /** Tells the schedules room how a scheduled run ended; a failure to record it never fails the turn. */
  private async runEnded(event: InboxEvent, outcome: TurnOutcome): Promise<void> {
    const run = event.payload.kind === 'message' ? event.payload.schedule : undefined;
    const { scheduled } = this.extras;
    if (!run || !scheduled) return;
    await scheduled
      .runEnded(run, outcome)
      .catch((error: unknown) =>
        this.logger.warn({ err: error, schedule: run.id }, 'could not record a run'),
      );
  }

  /**
   * Drops (with one polite notice per burst) messages beyond the sender's per-minute allowance. A scheduled run
   * counts as a message of its creator (ten one-off tasks a second are no way around the limit), and runs only
   * while its creator may still talk to Butler there.
   */
  private async withinRateLimit(events: InboxEvent[]) {
    const allowed: Array<{ event: InboxEvent; message: InboundMessage }> = [];
    const limit = this.options.messagesPerMinute;
    for (const event of events) {
      if (event.payload.kind !== 'message') continue;
      const run = event.payload.schedule;
      if (run && this.extras.isAllowed && !this.extras.isAllowed(event.payload)) {
        await this.store.inbox.finish([event.id], 'failed', 'its creator may no longer talk to Butler there');
        await this.extras.scheduled?.creatorNotAllowed(run);
        continue;
      }
      const rank = event.senderRank;
      if (rank <= limit) {
        allowed.push({ event, message: event.payload });
        continue;
      }
      await this.store.inbox.finish([event.id], 'rate_limited');
      const notice = rateLimitNotice(limit);
      if (rank === limit + 1) await this.notify([event], notice);
      await this.reportDropped([event], notice);
      if (run) await this.runEnded(event, 'failed');
    }
    return allowed;
  }

  /**
   * Ends, for adapters that follow turns (the HTTP API's streams), messages dropped without a turn: a
   * caller waiting for its answer learns there will be none.
   */
  private async reportDropped(events: InboxEvent[], error: string): Promise<void> {
    const to = this.senderOf(events);
    await to?.adapter
      .onTurnEvent?.(to.target, { type: 'error', error })
      .catch((failure: unknown) => this.logger.warn({ err: failure }, 'could not report a dropped message'));
  }

  private async notify(events: InboxEvent[], text: string): Promise<void> {
    const to = this.senderOf(events);
    await to?.adapter
      .postNotice(to.target, text)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not post a notice'));
  }

  /** The adapter and reply target of the last of `events`, when it is a message. */
  private senderOf(events: InboxEvent[]) {
    const last = events.at(-1);
    if (last?.payload.kind !== 'message') return undefined;
    const message = last.payload;
    const adapter = this.adapters.get(message.address.platform);
    if (!adapter) return undefined;
    const messageIds = events.flatMap((event) =>
      event.payload.kind === 'message' ? [event.payload.messageId] : [],
    );
    return {
      adapter,
      target: { address: message.address, replyTo: message.messageId, userId: message.user.id, messageIds },
    };
  }
}

/** A message people sent (not a resume, not a scheduled run): such messages are answered together. */
const isPeoplesMessage = (event: InboxEvent | undefined) =>
  event?.payload.kind === 'message' && event.payload.schedule === undefined;

/**
 * Splits a conversation's claimed events into turns: runs of people's messages, and each resume and each
 * scheduled run on its own (a run answers its task, not whoever wrote beside it).
 */
function groupEvents(events: readonly InboxEvent[]): InboxEvent[][] {
  const groups: InboxEvent[][] = [];
  for (const event of events) {
    const current = groups.at(-1);
    if (isPeoplesMessage(event) && isPeoplesMessage(current?.[0])) current?.push(event);
    else groups.push([event]);
  }
  return groups;
}
