import { decodeConversationKey } from '../contracts/conversation-key.js';
import type { Logger } from '../contracts/logger.js';
import { type People, senderKey } from '../contracts/people.js';
import type { Store } from '../contracts/store.js';
import { decideDue } from './due.js';

/**
 * Turns due tasks into inbox work, in every process: each look locks the due tasks nobody else holds, and
 * in one transaction queues each slot's run and moves the task on. A crash before the commit leaves the
 * task due (the next look queues it); after it, the run is in the inbox, which runs it once.
 */

export interface SchedulerOptions {
  /** How often to look for due tasks. */
  checkEveryMs: number;
  /** How late a missed run may still start. */
  graceMs: number;
  /** Tasks handled per look (the rest are due still and go in the next). */
  batch?: number;
}

export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;

  constructor(
    private readonly store: Store,
    /** Whom a run counts toward (its creator's person, for rate limits). */
    private readonly people: People,
    private readonly options: SchedulerOptions,
    private readonly logger: Logger,
    /** Queued runs wait in the inbox: wake a worker loop to take them now. */
    private readonly onQueued: () => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    const look = () => {
      if (this.running) return;
      this.running = this.look().finally(() => {
        this.running = undefined;
      });
    };
    look();
    this.timer = setInterval(look, this.options.checkEveryMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Queues every due run; returns the inbox ids queued (tests call it with their own clock). */
  async fireDue(): Promise<number[]> {
    const batch = this.options.batch ?? 50;
    const queued: number[] = [];
    for (;;) {
      const now = this.now();
      let handled = 0;
      const ids = await this.store.schedules.fireDue(now, batch, (schedule) => {
        handled += 1;
        const { workspace } = decodeConversationKey(schedule.conversationKey);
        const sender = senderKey(this.people, schedule.creator, workspace);
        const decision = decideDue(schedule, now, this.options.graceMs, sender);
        if (!decision.event)
          this.logger.warn(
            { schedule: schedule.id, slot: decision.slot, missed: decision.missed.length + 1 },
            'a scheduled run was missed by more than the grace window; skipped',
          );
        else if (decision.missed.length > 0)
          this.logger.warn(
            { schedule: schedule.id, missed: decision.missed.length },
            'earlier runs were missed; skipped',
          );
        return decision;
      });
      queued.push(...ids);
      if (handled < batch) return queued;
    }
  }

  private async look(): Promise<void> {
    try {
      const queued = await this.fireDue();
      if (queued.length > 0) {
        this.logger.info({ runs: queued.length }, 'scheduled runs queued');
        this.onQueued();
      }
      this.failures = 0;
    } catch (error) {
      // While the database is down every look fails: say so once, not every few seconds.
      if (this.failures++ === 0) this.logger.error({ err: error }, 'looking for due tasks failed');
    }
  }
}
