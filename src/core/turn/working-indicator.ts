import type { ChatAdapter, ReplyTarget } from '../contracts/adapter.js';

/**
 * The turn's working indicator (a status line, a reaction), shown only when the reply has not started
 * within `delayMs`: a reply that starts at once is its own sign of life, and a fast turn spares the
 * platform the indicator's two calls. Progress ("is asking ops…") shows it at once.
 */
export class WorkingIndicator {
  private shown: Promise<() => Promise<void>> | undefined;
  /** Progress statuses on their way, in order. */
  private pending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly adapter: ChatAdapter,
    private readonly target: ReplyTarget,
    private readonly delayMs: number,
    private readonly replyStarted: () => boolean,
  ) {}

  /** Arms the indicator at the start of the turn's work. */
  start(): void {
    if (this.delayMs <= 0) {
      this.show();
      return;
    }
    this.timer = setTimeout(() => {
      if (!this.replyStarted()) this.show();
    }, this.delayMs);
  }

  /**
   * Shows `status` where the platform's indicator has text; never throws and never waits for the platform (the
   * turn goes on; the status follows the indicator once it shows).
   */
  progress(status: string): void {
    this.show();
    const shown = this.shown;
    this.pending = (this.pending ?? Promise.resolve())
      .then(() => shown)
      .then(() => this.adapter.showProgress?.(this.target, status))
      .catch(() => {});
  }

  /**
   * Takes the indicator away if it was shown; never throws. The promise settles once the platform was told:
   * for the turn's background work, never for the turn to wait on.
   */
  clear(): Promise<void> {
    clearTimeout(this.timer);
    const shown = this.shown;
    const pending = this.pending;
    return Promise.resolve()
      .then(() => pending)
      .then(() => shown)
      .then((clearShown) => clearShown?.())
      .catch(() => {});
  }

  private show(): void {
    clearTimeout(this.timer);
    this.shown ??= this.adapter.showWorking(this.target).catch(() => async () => {});
  }
}
