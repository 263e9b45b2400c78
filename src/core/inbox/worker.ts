import { randomUUID } from 'node:crypto';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { ChatAdapter } from '../contracts/adapter.js';
import type { Platform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { ClaimedBatch, Store } from '../contracts/store.js';
import { TurnInterruptedError } from '../turn/turn.js';
import type { TurnRunner } from '../turn/turn-runner.js';
import { type DispatchExtras, type DispatchOptions, TurnDispatcher } from './dispatch.js';
import { type SweepChores, Sweeper, type SweeperOptions } from './sweeper.js';

/**
 * Takes work from the durable inbox: claims all pending events of one conversation under a lease
 * (so one turn per conversation runs at a time across every process) and hands them to the dispatcher,
 * which runs their turns. Several loops run concurrently, each on a different conversation; the sweeper
 * keeps the inbox and the approvals tidy beside them.
 */

export interface WorkerOptions extends DispatchOptions, SweeperOptions {
  leaseMs: number;
  pollMs: number;
  concurrency: number;
}

export class Worker {
  readonly owner = `worker-${randomUUID()}`;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** A wake that found no idle loop: the next loop to go idle claims again at once instead. */
  private wakePending = false;
  /** Whether an idle loop already holds the poll timer. */
  private polling = false;
  private readonly dispatcher: TurnDispatcher;
  private readonly sweeper: Sweeper;
  private readonly shutdown = new AbortController();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** While the database is down every poll fails: the first failure is logged, then one a minute. */
  private claimFailures = 0;
  private lastClaimFailureLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Store,
    private readonly runner: TurnRunner,
    approvals: ApprovalService,
    private readonly adapters: ReadonlyMap<Platform, ChatAdapter>,
    private readonly options: WorkerOptions,
    private readonly logger: Logger,
    extras: DispatchExtras & SweepChores = {},
  ) {
    this.dispatcher = new TurnDispatcher(store, runner, adapters, options, logger, extras);
    this.sweeper = new Sweeper(store, runner, approvals, options, logger, extras);
  }

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
    this.sweeper.start();
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

  /**
   * Resolves when no turn is running and, unless `cosmetic` is false, what turns left in the background
   * (statuses on their way to the platform) has settled (tests and benchmarks wait on it).
   */
  async whenIdle(options: { cosmetic?: boolean } = {}): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (options.cosmetic ?? true) await this.runner.background.settled();
  }

  /** Stops claiming; lets running turns finish until the deadline, then interrupts them (they are retried later). */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    const sweeping = this.sweeper.stop();
    for (const wake of [...this.wakers]) wake();
    const finished = Promise.all(this.loops).then(() => true);
    const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), deadlineMs).unref());
    if (!(await Promise.race([finished, timer]))) {
      this.logger.warn('shutdown deadline reached; interrupting running turns');
      this.shutdown.abort();
      await finished;
    }
    await sweeping;
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
      await this.dispatcher.dispatch(conversationKey, claim.events, signal, log);
    } catch (error) {
      if (!(error instanceof TurnInterruptedError)) log.error({ err: error }, 'processing failed');
    } finally {
      clearInterval(heartbeat);
      this.active -= 1;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
