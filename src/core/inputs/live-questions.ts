import type { InputWaitRecord, NewInputWait } from '../contracts/input-waits.js';
import type { Store } from '../contracts/store.js';

export interface LiveQuestionTiming {
  /** How often a waiting call looks for an answer given in another process. */
  pollMs: number;
  /** How long one renewal vouches for a call: the questions of a process gone longer than this lapse. */
  leaseMs: number;
}

const defaultTiming: LiveQuestionTiming = { pollMs: 1_000, leaseMs: 30_000 };

/**
 * The live questions of this process: a 2025 session's call that asked its requester something waits here, in
 * the process holding the session, for the answer (which is stored like any other, by `InputService`). An answer
 * given in this process wakes its call at once; one given in another process is found by polling. While a call
 * waits, its question's lease is renewed; the sweep lapses the questions of a process that is gone.
 */
export class LiveQuestions {
  private readonly bells = new Map<string, Set<() => void>>();
  private readonly closing = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly timing: LiveQuestionTiming = defaultTiming,
  ) {}

  /** Stores a question whose call waits in this process. */
  open(wait: Omit<NewInputWait, 'resume' | 'liveUntil'>): Promise<InputWaitRecord> {
    return this.store.inputWaits.create({ ...wait, resume: null, liveUntil: this.leaseEnd() });
  }

  /**
   * This process is shutting down: its calls stop waiting at once (their questions lapse, their servers hear
   * `cancel`), so their turns end before the process does instead of holding the shutdown until its deadline.
   */
  close(): void {
    this.closing.abort();
  }

  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** An answer to the question `id` was stored in this process: its call, when it waits here, reads it now. */
  answered(id: string): void {
    for (const wake of this.bells.get(id) ?? []) wake();
  }

  /**
   * Waits until the question `id` is closed, or its time is up, and returns it as it is then (a question past its
   * expiry still shows `waiting` until the sweep ends it, but takes no more answers). Throws when `given` aborts,
   * or the process shuts down.
   */
  async settled(id: string, given: AbortSignal): Promise<InputWaitRecord | undefined> {
    const signal = AbortSignal.any([given, this.closing.signal]);
    // Renewed at once: showing the form (paced platform calls) may have taken much of the first lease.
    let renewed = 0;
    for (;;) {
      signal.throwIfAborted();
      const wait = await this.store.inputWaits.get(id);
      const left = wait ? wait.expiresAt.getTime() - Date.now() : 0;
      if (wait?.status !== 'waiting' || left <= 0) return wait;
      if (Date.now() - renewed >= this.timing.leaseMs / 3) {
        await this.store.inputWaits.renewLive(id, this.leaseEnd());
        renewed = Date.now();
      }
      await this.bell(id, Math.min(this.timing.pollMs, left), signal);
    }
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.timing.leaseMs);
  }

  /** Resolves when `id` is answered here, after `ms`, or when `signal` aborts, whichever is first. */
  private bell(id: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const ring = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', ring);
        this.bells.get(id)?.delete(ring);
        if (this.bells.get(id)?.size === 0) this.bells.delete(id);
        resolve();
      };
      const timer = setTimeout(ring, ms);
      signal.addEventListener('abort', ring, { once: true });
      this.bells.set(id, (this.bells.get(id) ?? new Set()).add(ring));
    });
  }
}
