import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface AdmissionOptions {
  /** Turns that may always run, whatever the pressure: answers progress when the process is saturated. */
  floor: number;
  /** The event loop's delay past which no more turns start (ms). */
  maxLagMs: number;
  /** How long storing a delivery may take (ms) before no more turns start. */
  maxStoreMs: number;
  sampleMs?: number;
}

/**
 * At least 8 turns run (the old fixed pool); past them a turn starts while the event loop lags at most 50 ms and
 * deliveries store within 50 ms: far inside the platforms' 3 s, and above what a healthy database takes.
 */
export const defaultAdmission: AdmissionOptions = { floor: 8, maxLagMs: 50, maxStoreMs: 20 };

/**
 * Whether this process may start another turn now. A turn waiting on its model costs a promise, so hundreds
 * may be in flight; but starting turns and streaming their replies is work on the event loop and commits in
 * the database, which the platforms' deliveries share, and a delivery must be stored and acknowledged within
 * 3 s. While the event loop lags, or storing a delivery (the intake reports each) is slow, over the last tenth
 * of a second, new turns wait unless fewer than `floor` run: deliveries come first, answers still progress.
 */
export class Admission {
  private readonly delay = monitorEventLoopDelay({ resolution: 10 });
  private timer: NodeJS.Timeout | undefined;
  private lagMs = 0;
  private storeMs = 0;
  private slowestStoreMs = 0;

  constructor(private readonly options: AdmissionOptions) {}

  start(): void {
    if (this.timer) return;
    this.delay.enable();
    this.timer = setInterval(() => {
      this.lagMs = this.delay.max / 1e6;
      this.delay.reset();
      this.storeMs = this.slowestStoreMs;
      this.slowestStoreMs = 0;
    }, this.retryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.delay.disable();
  }

  /** The intake stored a delivery in `milliseconds`. */
  noteStored(milliseconds: number): void {
    this.slowestStoreMs = Math.max(this.slowestStoreMs, milliseconds);
  }

  /** Whether a turn may start beside the `running` ones. */
  admits(running: number): boolean {
    if (running < this.options.floor) return true;
    return this.lagMs <= this.options.maxLagMs && this.storeMs <= this.options.maxStoreMs;
  }

  /** How long a loop that was not admitted waits before it asks again. */
  get retryMs(): number {
    return this.options.sampleMs ?? 100;
  }
}
