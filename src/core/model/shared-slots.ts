import { randomUUID } from 'node:crypto';
import type { Logger } from '../contracts/logger.js';
import type { ModelSlotRepository } from '../contracts/store.js';
import type { ModelSlots } from './model-gate.js';

export interface SharedSlotOptions {
  /** Calls in flight to one model across every process of the database (`model.maxConcurrent`). */
  cap: number;
  /** How long a slot outlives a process that died holding it; renewed while held. */
  leaseMs?: number;
  /** How often a waiting call looks for a slot another process released. */
  pollMs?: number;
}

interface Waiter {
  wake: () => void;
}

/**
 * `model.maxConcurrent` across processes, through the database. In this process a call waits in line (first
 * come, first served) without touching the database while the process already holds `cap` slots; the call at
 * the head of the line takes a slot when one is free, and looks again each `pollMs` (or at once when a slot of
 * this process is released). One heartbeat renews every slot the process holds.
 */
export class SharedModelSlots implements ModelSlots {
  private readonly holder = `slots-${randomUUID()}`;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  /** Slots this process holds, by model. */
  private readonly held = new Map<string, number>();
  private readonly lines = new Map<string, Waiter[]>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: ModelSlotRepository,
    private readonly options: SharedSlotOptions,
    private readonly logger: Logger,
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 250;
  }

  async take(model: string, signal: AbortSignal): Promise<() => void> {
    const line = this.lines.get(model) ?? [];
    this.lines.set(model, line);
    const me: Waiter = { wake: () => {} };
    line.push(me);
    try {
      for (;;) {
        signal.throwIfAborted();
        if (line[0] === me && (this.held.get(model) ?? 0) < this.options.cap) {
          const slot = await this.repository.take(model, this.options.cap, this.holder, this.leaseMs);
          if (slot !== undefined) return this.taken(model, slot);
        }
        await this.pause(me, signal);
      }
    } finally {
      line.splice(line.indexOf(me), 1);
      line[0]?.wake();
    }
  }

  stop(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private taken(model: string, slot: number): () => void {
    this.held.set(model, (this.held.get(model) ?? 0) + 1);
    this.heartbeat ??= setInterval(() => void this.renew(), this.leaseMs / 3).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.set(model, (this.held.get(model) ?? 1) - 1);
      this.repository
        .release(model, slot, this.holder)
        .catch((error: unknown) => this.logger.warn({ err: error, model }, 'releasing a model slot failed'))
        .finally(() => this.lines.get(model)?.[0]?.wake());
    };
  }

  private async renew(): Promise<void> {
    if (![...this.held.values()].some((count) => count > 0)) return;
    await this.repository
      .renew(this.holder, this.leaseMs)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'renewing model slots failed'));
  }

  /** Until this process releases a slot, another process may have (`pollMs`), or the signal aborts. */
  private pause(waiter: Waiter, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        waiter.wake = () => {};
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      waiter.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
