import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { ChatAdapter } from '../contracts/adapter.js';
import type { Platform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { ClaimedBatch, Store } from '../contracts/store.js';
import { TurnInterruptedError } from '../turn/turn.js';
import type { TurnRunner } from '../turn/turn-runner.js';
import { Admission, defaultAdmission } from './admission.js';
import { type DispatchExtras, type DispatchOptions, TurnDispatcher } from './dispatch.js';
import { type SweepChores, Sweeper, type SweeperOptions } from './sweeper.js';

/**
 * Takes work from the durable inbox: claims all pending events of one conversation under a lease
 * (so one turn per conversation runs at a time across every process) and hands them to the dispatcher,
 * which runs their turns. Loops run concurrently, each on a different conversation: a turn waiting on its
 * model, a tool or a person is a promise, holding no database connection, so there are hundreds of them
 * (`concurrency`). One heartbeat renews every lease this process holds in one statement; the sweeper keeps
 * the inbox and the approvals tidy beside them.
 */

export interface WorkerOptions extends DispatchOptions, SweeperOptions {
  leaseMs: number;
  pollMs: number;
  concurrency: number;
  /** Shared with the intake, which reports how long storing each delivery takes. */
  admission?: Admission;
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
  /** The conversations this process runs turns of, and how to stop each when its lease is lost. */
  private readonly held = new Map<string, { lost: AbortController; log: Logger }>();
  private heartbeat: NodeJS.Timeout | undefined;
  /** Starting a turn waits while deliveries are slow to store and acknowledge, unless only a few run. */
  private readonly admission: Admission;
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
    this.admission = options.admission ?? new Admission(defaultAdmission);
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
    this.admission.start();
    for (let slot = 0; slot < this.options.concurrency; slot++) this.loops.push(this.loop());
    this.heartbeat = setInterval(() => void this.renewLeases(), this.options.leaseMs / 3);
    this.heartbeat.unref();
    this.sweeper.start();
  }

  /** Keeps every held conversation leased; a turn whose lease another process took is stopped. */
  private async renewLeases(): Promise<void> {
    const keys = [...this.held.keys()];
    if (keys.length === 0) return;
    try {
      const renewed = new Set(await this.store.inbox.renewLeases(this.owner, keys, this.options.leaseMs));
      for (const key of keys) {
        const turn = this.held.get(key);
        if (renewed.has(key) || !turn) continue;
        turn.log.error('lost the conversation lease; stopping this turn');
        turn.lost.abort();
      }
    } catch (error) {
      this.logger.warn({ err: error, conversations: keys.length }, 'lease renewal failed');
    }
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
    clearInterval(this.heartbeat);
    this.admission.stop();
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
      if (!this.admission.admits(this.active)) {
        if (finished) await this.release(finished);
        finished = undefined;
        await sleep(this.admission.retryMs);
        continue;
      }
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
        // A newer claim of the same conversation in this process (see process) keeps the lease.
        if (!this.held.has(claim.conversationKey)) finished = claim.conversationKey;
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
    // This process claimed a conversation it is still answering: its lease lapsed (a stall, a database
    // outage longer than the lease) and the older turn stops, as it would had another process claimed it.
    const stale = this.held.get(conversationKey);
    if (stale) {
      stale.log.error(
        'the conversation lease lapsed and the conversation was claimed again; stopping this turn',
      );
      stale.lost.abort();
    }
    const turn = { lost: new AbortController(), log };
    this.held.set(conversationKey, turn);
    const signal = AbortSignal.any([turn.lost.signal, this.shutdown.signal]);
    try {
      await this.dispatcher.dispatch(conversationKey, claim.events, signal, log);
    } catch (error) {
      if (!(error instanceof TurnInterruptedError)) log.error({ err: error }, 'processing failed');
    } finally {
      if (this.held.get(conversationKey) === turn) this.held.delete(conversationKey);
      this.active -= 1;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
