import type { LaneSpec, Pacer, RetryPolicy } from './pacer.js';

/** A cosmetic call: which lanes it counts against, and how to send a state. */
export interface CoalescedCall<S> {
  method: string;
  lanes: readonly LaneSpec[];
  send(state: S): Promise<void>;
}

export interface CoalescerOptions<S> {
  pacer: Pacer;
  /** How rate-limited answers are handled (a 429 still closes the lane for its Retry-After). */
  policy: RetryPolicy;
  /**
   * Whether sending `next` would change nothing a person sees, given what the platform shows (`shown`,
   * undefined when nothing was ever shown): the same state again, or taking away what never showed.
   */
  unneeded(shown: S | undefined, next: S): boolean;
  /** How long a state waits for room before it is dropped: by then it says nothing worth a call. */
  maxWaitMs: number;
  /** Hears a state that was never shown: it waited too long, or the platform refused it. */
  onDropped?(key: string, state: S, reason: 'expired' | 'failed', error?: unknown): void;
  /** Keys remembered at most; past it the least recently used idle ones are forgotten. */
  maxKeys?: number;
}

interface Pending<S> {
  state: S;
  call: CoalescedCall<S>;
  abort: AbortController;
  timer: NodeJS.Timeout;
  done: Array<() => void>;
}

interface Entry<S> {
  /** What the platform shows, as far as Butler knows. */
  shown: S | undefined;
  /** The latest state wanted and not yet sent. */
  pending: Pending<S> | undefined;
  /** A call for this key waits for room or is on its way; at most one at a time. */
  busy: boolean;
  /** The state of the call on its way, once it left. */
  sending: S | undefined;
}

/** What the coalescer knows of a key. */
export interface CoalescedState<S> {
  shown: S | undefined;
  pending: S | undefined;
  /** A call for this key has left and is not answered yet. */
  sending: S | undefined;
}

const defaultMaxKeys = 10_000;

/**
 * Cosmetic calls (a session status, a status line, a reaction) that must never hold up the work they
 * describe: callers never wait for them. Per key (a thread, a message) only the latest state matters: one call
 * at a time, at the lowest priority of its lanes, sending the newest state wanted when room comes; a state the
 * platform already shows is not sent again, and one that waited `maxWaitMs` is dropped.
 */
export class Coalescer<S> {
  private readonly entries = new Map<string, Entry<S>>();
  private readonly options: CoalescerOptions<S>;

  constructor(options: CoalescerOptions<S>) {
    this.options = options;
  }

  /**
   * Wants `state` shown for `key`. Never waits for the platform: the promise (for tests and shutdown, never the
   * caller's path) settles once this state, or one that replaced it, was sent, dropped or found unneeded.
   */
  set(key: string, state: S, call: CoalescedCall<S>): Promise<void> {
    const entry = this.entry(key);
    // Unless a call is on its way (it may land after), a state already shown needs no call.
    if (entry.sending === undefined && this.options.unneeded(entry.shown, state)) {
      this.drop(entry);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      if (entry.pending) {
        Object.assign(entry.pending, { state, call });
        entry.pending.done.push(resolve);
        return;
      }
      const abort = new AbortController();
      const timer = setTimeout(() => this.expire(key, entry), this.options.maxWaitMs);
      timer.unref?.();
      entry.pending = { state, call, abort, timer, done: [resolve] };
      if (!entry.busy) this.start(key, entry);
    });
  }

  /** The platform shows `state` for `key` through another call (a stream's stop setting the session's status). */
  assume(key: string, state: S): void {
    const entry = this.entry(key);
    entry.shown = state;
    if (entry.sending === undefined && entry.pending && this.options.unneeded(state, entry.pending.state))
      this.drop(entry);
  }

  /** Forgets a state still waiting for `key`: nothing more is sent for it. */
  cancel(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.drop(entry);
  }

  state(key: string): CoalescedState<S> {
    const entry = this.entries.get(key);
    return { shown: entry?.shown, pending: entry?.pending?.state, sending: entry?.sending };
  }

  private entry(key: string): Entry<S> {
    let entry = this.entries.get(key);
    if (entry) {
      // Most recently used last: the sweep forgets from the front.
      this.entries.delete(key);
    } else {
      entry = { shown: undefined, pending: undefined, busy: false, sending: undefined };
      this.sweep();
    }
    this.entries.set(key, entry);
    return entry;
  }

  private sweep(): void {
    const limit = this.options.maxKeys ?? defaultMaxKeys;
    if (this.entries.size < limit) return;
    for (const [key, entry] of this.entries) {
      if (this.entries.size < limit * 0.9) break;
      if (!entry.busy && !entry.pending) this.entries.delete(key);
    }
  }

  /** One call for `key`: waits for room (giving way to every other call), then sends the newest state. */
  private start(key: string, entry: Entry<S>): void {
    const pending = entry.pending;
    if (!pending) return;
    entry.busy = true;
    let sent: Pending<S> | undefined;
    const attempt = async () => {
      // Room came: what goes is what is wanted now.
      sent = entry.pending;
      if (!sent) return;
      entry.pending = undefined;
      clearTimeout(sent.timer);
      entry.sending = sent.state;
      await sent.call.send(sent.state);
      entry.shown = sent.state;
    };
    const { pacer, policy } = this.options;
    pacer
      .run(pending.call.method, pending.call.lanes, attempt, policy, {
        priority: 'cosmetic',
        signal: pending.abort.signal,
      })
      .catch((error: unknown) => {
        // An abandoned wait was expired or cancelled, and said so there.
        if (sent) this.options.onDropped?.(key, sent.state, 'failed', error);
      })
      .finally(() => {
        entry.busy = false;
        entry.sending = undefined;
        for (const resolve of sent?.done ?? []) resolve();
        const next = entry.pending;
        if (!next) return;
        if (this.options.unneeded(entry.shown, next.state)) this.drop(entry);
        else this.start(key, entry);
      });
  }

  private expire(key: string, entry: Entry<S>): void {
    const pending = entry.pending;
    if (!pending) return;
    this.options.onDropped?.(key, pending.state, 'expired');
    this.drop(entry);
  }

  /** Gives up the state waiting for `entry` (its wait, if any, is abandoned). */
  private drop(entry: Entry<S>): void {
    const pending = entry.pending;
    if (!pending) return;
    entry.pending = undefined;
    clearTimeout(pending.timer);
    pending.abort.abort();
    for (const resolve of pending.done) resolve();
  }
}
