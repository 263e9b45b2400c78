import { randomUUID } from 'node:crypto';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { ChatAdapter } from '../contracts/adapter.js';
import type { InboundMessage, Platform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { ClaimedBatch, InboxEvent, Store } from '../contracts/store.js';
import { TurnInterruptedError } from '../turn/turn.js';
import type { TurnRunner } from '../turn/turn-runner.js';

/**
 * Takes work from the durable inbox: claims all pending events of one conversation under a lease
 * (so one turn per conversation runs at a time across every process), runs the turn, and marks the
 * events done. Several loops run concurrently, each on a different conversation.
 */

export interface WorkerOptions {
  leaseMs: number;
  pollMs: number;
  concurrency: number;
  /** A message a user sends beyond this many per minute gets a polite refusal instead of an answer. */
  messagesPerMinute: number;
  /** An event whose turn crashed the process this many times is given up on, with a message. */
  maxAttempts: number;
  sweepMs: number;
  /** Finished events are deleted this long after they finished. */
  inboxRetentionMs: number;
}

/** Pruning runs at most this often, in batches, so that no single statement holds many row locks. */
const pruneEveryMs = 3_600_000;
const pruneBatch = 1_000;
const pruneBatchesPerRun = 100;

const rateLimitNotice = (limit: number) =>
  `You're sending messages faster than I can answer (${limit} a minute). Please wait a moment and ask again.`;

export class Worker {
  readonly owner = `worker-${randomUUID()}`;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** A wake that found no idle loop: the next loop to go idle claims again at once instead. */
  private wakePending = false;
  /** Whether an idle loop already holds the poll timer. */
  private polling = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private lastPrune = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> | undefined;
  private readonly shutdown = new AbortController();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** While the database is down every poll fails: the first failure is logged, then one a minute. */
  private claimFailures = 0;
  private lastClaimFailureLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Store,
    private readonly runner: TurnRunner,
    private readonly approvals: ApprovalService,
    private readonly adapters: ReadonlyMap<Platform, ChatAdapter>,
    private readonly options: WorkerOptions,
    private readonly logger: Logger,
  ) {}

  /**
   * The platforms this process can answer on. Another process sharing the database (the terminal chat
   * beside the service) takes the rest: a decision made in the admin console continues its turn there.
   */
  private get served(): Platform[] {
    return [...this.adapters.keys()];
  }

  start(): void {
    this.stopping = false;
    for (let slot = 0; slot < this.options.concurrency; slot++) this.loops.push(this.loop());
    const sweep = () => {
      this.sweeping = this.sweep().finally(() => {
        this.sweeping = undefined;
      });
    };
    sweep();
    this.sweepTimer = setInterval(sweep, this.options.sweepMs);
    this.sweepTimer.unref();
  }

  /**
   * New work arrived in this process: one idle loop stops waiting for the next poll. Waking one, not
   * all, spares the database a claim transaction per idle loop per event; a loop whose claim saw more
   * work waiting wakes the next one, so a burst still spreads over every loop.
   */
  wake(): void {
    const [first] = this.wakers;
    if (first) first();
    else this.wakePending = true;
  }

  /** Resolves when no turn is running (tests and benchmarks wait on it). */
  whenIdle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops claiming; lets running turns finish until the deadline, then interrupts them (they are retried later). */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.sweepTimer);
    for (const wake of [...this.wakers]) wake();
    const finished = Promise.all(this.loops).then(() => true);
    const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), deadlineMs).unref());
    if (!(await Promise.race([finished, timer]))) {
      this.logger.warn('shutdown deadline reached; interrupting running turns');
      this.shutdown.abort();
      await finished;
    }
    await this.sweeping;
    this.loops = [];
  }

  /**
   * One idle loop polls the database (for work accepted by other processes); the others sleep until
   * woken by local intake or by a loop that found work, so an idle Butler costs one query per interval.
   */
  private async loop(): Promise<void> {
    // The conversation this loop finished last: its lease goes with the next claim, in the same statement.
    let finished: string | undefined;
    while (!this.stopping) {
      let claim: ClaimedBatch | undefined;
      try {
        claim = await this.store.inbox.claimNext(this.owner, this.options.leaseMs, finished, this.served);
        // Events that came for the finished conversation during its turn were still leased to this
        // claim: without other work, look once more rather than leave them to the next poll.
        if (!claim && finished) {
          finished = undefined;
          claim = await this.store.inbox.claimNext(this.owner, this.options.leaseMs, undefined, this.served);
        }
        finished = undefined;
        if (this.claimFailures > 0) this.logger.info({ failures: this.claimFailures }, 'claiming work again');
        this.claimFailures = 0;
      } catch (error) {
        this.claimFailures += 1;
        if (Date.now() - this.lastClaimFailureLoggedAt >= 60_000) {
          this.lastClaimFailureLoggedAt = Date.now();
          this.logger.error({ err: error, failures: this.claimFailures }, 'claiming work failed');
        }
      }
      if (claim) {
        if (claim.more) this.wake();
        await this.process(claim);
        finished = claim.conversationKey;
      } else {
        await this.pause();
      }
    }
    if (finished) await this.release(finished);
  }

  private async release(conversationKey: string): Promise<void> {
    await this.store.inbox
      .releaseLease(conversationKey, this.owner)
      .catch((error: unknown) =>
        this.logger.warn({ err: error, conversation: conversationKey }, 'releasing the lease failed'),
      );
  }

  private pause(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    const polls = !this.polling;
    if (polls) this.polling = true;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        if (polls) this.polling = false;
        resolve();
      };
      const timer = polls ? setTimeout(done, this.options.pollMs) : undefined;
      this.wakers.add(done);
    });
  }

  private async sweep(): Promise<void> {
    try {
      await this.approvals.expireDue();
      // Six sweeps of grace so a turn that is posting its card right now is not raced.
      await this.runner.postMissingCards(new Date(Date.now() - 6 * this.options.sweepMs));
    } catch (error) {
      this.logger.error({ err: error }, 'approval sweep failed');
    }
    if (Date.now() - this.lastPrune >= Math.min(pruneEveryMs, this.options.inboxRetentionMs)) {
      this.lastPrune = Date.now();
      await this.pruneInbox().catch((error: unknown) =>
        this.logger.error({ err: error }, 'pruning finished inbox events failed'),
      );
    }
  }

  /** Deletes finished events past their retention: they hold message text and only served deduplication. */
  private async pruneInbox(): Promise<void> {
    const before = new Date(Date.now() - this.options.inboxRetentionMs);
    let pruned = 0;
    for (let batch = 0; batch < pruneBatchesPerRun && !this.stopping; batch++) {
      const deleted = await this.store.inbox.pruneFinished(before, pruneBatch);
      pruned += deleted;
      if (deleted < pruneBatch) break;
    }
    if (pruned > 0) this.logger.info({ pruned, before }, 'pruned finished inbox events');
  }

  private async process(claim: ClaimedBatch): Promise<void> {
    const { conversationKey } = claim;
    const log = this.logger.child({ conversation: conversationKey });
    this.active += 1;
    const lease = new AbortController();
    const signal = AbortSignal.any([lease.signal, this.shutdown.signal]);
    const heartbeat = setInterval(() => {
      this.store.inbox
        .renewLease(conversationKey, this.owner, this.options.leaseMs)
        .then((held) => {
          if (!held) {
            log.error('lost the conversation lease; stopping this turn');
            lease.abort();
          }
        })
        .catch((error: unknown) => log.warn({ err: error }, 'lease renewal failed'));
    }, this.options.leaseMs / 3);
    try {
      for (const group of groupEvents(claim.events)) {
        if (signal.aborted) break;
        await this.runGroup(conversationKey, group, signal, log);
      }
    } catch (error) {
      if (!(error instanceof TurnInterruptedError)) log.error({ err: error }, 'processing failed');
    } finally {
      clearInterval(heartbeat);
      this.active -= 1;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
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
    }
    const live = events.filter((event) => event.attempts <= this.options.maxAttempts);
    const first = live[0];
    if (!first) return;
    try {
      if (first.payload.kind === 'resume') {
        const batch = await this.store.approvals.listBatch(first.payload.batchId ?? first.payload.approvalId);
        if (batch.length === 0 || batch.some((approval) => approval.status === 'pending')) {
          await this.store.inbox.finish([first.id], 'done');
          return;
        }
        await this.runner.runResume(first.id, batch, signal, first.attempts > 1);
        return;
      }
      const messages = await this.withinRateLimit(live);
      if (messages.length === 0) return;
      await this.runner.runMessages(
        conversationKey,
        messages.map((entry) => entry.event.id),
        messages.map((entry) => entry.message),
        signal,
        messages.some((entry) => entry.event.attempts > 1),
      );
    } catch (error) {
      if (error instanceof TurnInterruptedError) throw error;
      // The turn could not even report its own failure (e.g. the database went away): leave the
      // events to be retried after the lease lapses, up to maxAttempts.
      log.error({ err: error, events: live.map((event) => event.id) }, 'turn crashed; will retry');
      throw error;
    }
  }

  /** Drops (with one polite notice per burst) messages beyond the sender's per-minute allowance. */
  private async withinRateLimit(events: InboxEvent[]) {
    const allowed: Array<{ event: InboxEvent; message: InboundMessage }> = [];
    const limit = this.options.messagesPerMinute;
    for (const event of events) {
      if (event.payload.kind !== 'message') continue;
      const rank = event.senderRank;
      if (rank <= limit) {
        allowed.push({ event, message: event.payload });
        continue;
      }
      await this.store.inbox.finish([event.id], 'rate_limited');
      const notice = rateLimitNotice(limit);
      if (rank === limit + 1) await this.notify([event], notice);
      await this.reportDropped([event], notice);
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

/** Splits a conversation's claimed events into turns: runs of messages, and each resume on its own. */
export function groupEvents(events: readonly InboxEvent[]): InboxEvent[][] {
  const groups: InboxEvent[][] = [];
  for (const event of events) {
    const current = groups.at(-1);
    if (event.payload.kind === 'message' && current?.[0]?.payload.kind === 'message') current.push(event);
    else groups.push([event]);
  }
  return groups;
}
