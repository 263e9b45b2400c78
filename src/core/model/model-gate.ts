import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What one model allows, as this process has learned it from the model's answers: a 429's Retry-After, or an
 * `x-ratelimit-remaining-*` of 0 until its `x-ratelimit-reset-*`, holds back every call this process makes to
 * that model, not only the turn that was told, so a rate limit costs one refused request instead of one per
 * turn in flight. With `model.maxConcurrent` a call also takes one of the model's slots, counted across every
 * process sharing the database (ModelSlots).
 */

/** The model's slots, shared by the processes of one database: `take` waits for a free one and returns its release. */
export interface ModelSlots {
  take(model: string, signal: AbortSignal): Promise<() => void>;
}

/** The longest a header may hold calls back: a bogus `retry-after: 86400` must not silence a model for a day. */
const longestHoldMs = 10 * 60_000;

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date: how long the model asks callers to wait. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const header = headers?.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/**
 * An `x-ratelimit-reset-*` value in milliseconds from now: OpenAI's durations (`1s`, `6m0s`, `20ms`), plain
 * seconds, or a date (RFC 3339, as some compatible servers send). Undefined when it is none of them.
 */
export function resetInMs(value: string | null): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length > 0 && parts.map((part) => part[0]).join('') === trimmed) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
    return parts.reduce((sum, [, amount, name]) => sum + Number(amount) * unit[name as keyof typeof unit], 0);
  }
  const date = Date.parse(trimmed);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

export class ModelGate {
  /** No call leaves before this time (epoch ms). */
  private closedUntil = 0;

  constructor(
    /** The model as its slots are counted: endpoint and name, never the key. */
    readonly name: string,
    private readonly slots?: ModelSlots,
  ) {}

  /** How long the model has asked callers to wait from now; 0 when it is open. */
  get waitMs(): number {
    return Math.max(0, this.closedUntil - Date.now());
  }

  /**
   * Waits while the model is closed, then takes a slot when slots are configured; returns its release.
   * Throws the signal's reason when it aborts (the caller's deadline or a stopped turn).
   */
  async enter(signal: AbortSignal): Promise<() => void> {
    while (this.waitMs > 0) await sleep(this.waitMs, undefined, { signal });
    return this.slots ? this.slots.take(this.name, signal) : () => {};
  }

  /** Nobody calls the model for `milliseconds` (a 429's Retry-After, or the backoff when it gave none). */
  hold(milliseconds: number): void {
    this.closedUntil = Math.max(this.closedUntil, Date.now() + Math.min(milliseconds, longestHoldMs));
  }

  /** Reads a response's rate-limit headers: a budget at 0 closes the model until its reset. */
  observe(headers: Headers): void {
    for (const budget of ['requests', 'tokens']) {
      if (headers.get(`x-ratelimit-remaining-${budget}`)?.trim() !== '0') continue;
      const reset = resetInMs(headers.get(`x-ratelimit-reset-${budget}`));
      if (reset !== undefined) this.hold(reset);
    }
  }
}
