import type { ChatAdapter, ReplyTarget, TurnOutcome, TurnStart } from '../contracts/adapter.js';
import type { Logger } from '../contracts/logger.js';

/**
 * The turn's life as the platform shows it beside the reply (Slack's agent session: `processing` with a stop
 * button, then `active`). Unlike the working indicator it covers the whole turn from its first moment, the
 * streaming reply included. Neither the start nor the end is awaited by the turn (a reply, a worker slot or the
 * end of a turn never waits for a status). The end is told as soon as the turn ends, whether or not the start
 * reached the platform yet: the adapter keeps them in order (and may drop both).
 */
export class TurnSession {
  private started: Promise<void> | undefined;
  private outcome: TurnOutcome | undefined;
  private waits: Promise<void> = Promise.resolve();

  constructor(
    private readonly adapter: ChatAdapter,
    private readonly target: ReplyTarget,
    private readonly log: Logger,
  ) {}

  /** Tells the adapter the turn began; never throws, never waits. */
  start(start: TurnStart): void {
    const { turnStarted } = this.adapter;
    if (!turnStarted) return;
    this.started = turnStarted
      .call(this.adapter, this.target, start)
      .catch((error: unknown) => this.log.warn({ err: error }, 'the adapter could not show the turn start'));
  }

  /**
   * The turn waits for a person mid-turn (`true`), or goes on (`false`); never throws, never waits. Told only
   * for a turn whose start was told.
   */
  waiting(waiting: boolean): void {
    const { turnWaiting } = this.adapter;
    if (!turnWaiting || !this.started) return;
    // Like the end, not queued behind the start: the adapter keeps the order (and the latest status wins).
    const told = turnWaiting
      .call(this.adapter, this.target, waiting)
      .catch((error: unknown) =>
        this.log.warn({ err: error }, 'the adapter could not show the turn waiting'),
      );
    this.waits = Promise.all([this.waits, told]).then(() => undefined);
  }

  /** How the turn ended; an ending that records none (a shutdown, a crash) ends as `interrupted`. */
  ended(outcome: TurnOutcome): void {
    this.outcome = outcome;
  }

  /** How the turn ended so far; undefined while it runs (and for one that ended without saying). */
  get ending(): TurnOutcome | undefined {
    return this.outcome;
  }

  /**
   * Tells the adapter the turn ended; never throws. The promise is for the turn's background work, never for the
   * turn to wait on.
   */
  close(): Promise<void> {
    const { turnEnded } = this.adapter;
    if (!this.started || !turnEnded) return Promise.resolve();
    const ended = turnEnded
      .call(this.adapter, this.target, this.outcome ?? 'interrupted')
      .catch((error: unknown) => this.log.warn({ err: error }, 'the adapter could not show the turn end'));
    return Promise.all([this.started, this.waits, ended]).then(() => undefined);
  }
}
