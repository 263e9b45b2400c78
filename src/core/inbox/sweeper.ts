import type { ApprovalService } from '../approvals/approval-service.js';
import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';
import type { TurnRunner } from '../turn/turn-runner.js';

/**
 * The inbox's housekeeping, on a timer: offers again the events a lapsed lease left claimed, closes approvals
 * past their deadline (their continuations become inbox work), posts cards a crash kept from being shown, and
 * prunes finished events past their retention.
 */

/** Timed work beside approvals' expiry, from rooms the inbox does not know. */
export interface SweepChores {
  /** Queues the reminders and escalations of waiting requests that fell due. */
  queueNotices?: () => Promise<number>;
  /** Ends the waits for a connection past their deadline (their turns go on without the calls). */
  expireConnectionWaits?: () => Promise<number>;
  /** Ends the waits on servers' questions past their deadline (their calls go on, told the person cancelled). */
  expireInputWaits?: () => Promise<number>;
  /** Reminds the requesters of questions that have waited long, once each. */
  remindInputs?: () => Promise<void>;
  /** Ends the questions whose call waited in a process that is gone (telling their people). */
  lapseInputWaits?: () => Promise<number>;
}

export interface SweeperOptions {
  sweepMs: number;
  /** Finished events are deleted this long after they finished. */
  inboxRetentionMs: number;
}

/**
 * A card or form younger than this is being posted by its turn: a lost one is posted only after it. The turn's
 * commit and post took over a second on a busy machine, which a fast sweep alone would race.
 */
const minimumPostingGraceMs = 3_000;

/** Pruning runs at most this often, in batches, so that no single statement holds many row locks. */
const pruneEveryMs = 3_600_000;
const pruneBatch = 1_000;
const pruneBatchesPerRun = 100;
const budgetNoteRetentionMs = 35 * 86_400_000;

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastPrune = Number.NEGATIVE_INFINITY;
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly runner: TurnRunner,
    private readonly approvals: ApprovalService,
    private readonly options: SweeperOptions,
    private readonly logger: Logger,
    private readonly chores: SweepChores = {},
  ) {}

  start(): void {
    this.stopping = false;
    const sweep = () => {
      this.running = this.sweep().finally(() => {
        this.running = undefined;
      });
    };
    sweep();
    this.timer = setInterval(sweep, this.options.sweepMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async sweep(): Promise<void> {
    try {
      // Claims take pending events only: what a lapsed lease left claimed is offered again.
      const reopened = await this.store.inbox.reopenLapsed();
      if (reopened > 0) this.logger.info({ events: reopened }, 'events of lapsed leases are pending again');
      await this.approvals.expireDue();
      await this.chores.queueNotices?.();
      await this.chores.expireConnectionWaits?.();
      await this.chores.expireInputWaits?.();
      await this.chores.remindInputs?.();
      await this.chores.lapseInputWaits?.();
      // Six sweeps of grace (3 s at least) so a turn that is posting its card or form right now is not raced.
      const grace = Math.max(6 * this.options.sweepMs, minimumPostingGraceMs);
      await this.runner.chores.postMissingCards(new Date(Date.now() - grace));
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
    // Scheduled runs' records go with their inbox events: a minutely task would otherwise add 1,440 a day.
    let runs = 0;
    for (let batch = 0; batch < pruneBatchesPerRun && !this.stopping; batch++) {
      const deleted = await this.store.schedules.pruneRuns(before, pruneBatch);
      runs += deleted;
      if (deleted < pruneBatch) break;
    }
    if (runs > 0) this.logger.info({ runs, before }, 'pruned records of scheduled runs');
    // A budget note is kept past the longest period it counts (a calendar month), or it would be posted twice.
    const notes = await this.store.budgets.pruneNotices(new Date(Date.now() - budgetNoteRetentionMs));
    if (notes > 0) this.logger.info({ notes }, 'pruned budget notes of past periods');
  }
}
