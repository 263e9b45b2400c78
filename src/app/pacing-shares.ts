import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/contracts/logger.js';
import type { OpenDatabase } from '../storage/database.js';
import { type ProcessRoster, processRoster } from '../storage/repositories/roster.js';

/** How often a process says it is alive, and how long one unheard of still counts. */
const heartbeatMs = 10_000;
const aliveForMs = 35_000;

/**
 * This process's part of each platform budget it paces: one over the processes alive that pace the same
 * workspace (Slack) or app (Feishu), from a roster in the shared database. Each process paces to its part, so
 * together they stay inside the platform's limits with no statement per platform call; a process that dies
 * stops counting within `aliveForMs`, and the others then take its part back. On the embedded database no
 * other process can share it: every budget is all this process's.
 */
export class PacingShares {
  private readonly id = `process-${randomUUID()}`;
  private readonly budgets = new Set<string>();
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly roster: ProcessRoster | undefined;

  constructor(
    database: OpenDatabase,
    private readonly logger: Logger,
  ) {
    this.roster = database.kind === 'postgres' ? processRoster(database.db) : undefined;
  }

  /** This process's part of `budget` now (between 0 and 1); naming a budget puts it in the next heartbeat. */
  shareOf(budget: string): number {
    if (!this.budgets.has(budget)) {
      this.budgets.add(budget);
      void this.beat();
    }
    return 1 / Math.max(1, this.counts.get(budget) ?? 1);
  }

  start(): void {
    if (!this.roster || this.timer) return;
    this.timer = setInterval(() => void this.beat(), heartbeatMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.roster
      ?.leave(this.id, new Date(Date.now() - 24 * 60 * 60_000))
      .catch((error: unknown) => this.logger.debug({ err: error }, 'could not leave the process roster'));
  }

  /** Says this process is alive and reads the others now, instead of at the next heartbeat. */
  refresh(): Promise<void> {
    return this.beat();
  }

  private async beat(): Promise<void> {
    if (!this.roster || this.budgets.size === 0) return;
    try {
      await this.roster.beat(this.id, [...this.budgets]);
      this.counts = await this.roster.alive(new Date(Date.now() - aliveForMs));
    } catch (error) {
      // The last known shares stay: a database outage is no reason to pace harder or looser.
      this.logger.debug({ err: error }, 'process roster heartbeat failed');
    }
  }
}
