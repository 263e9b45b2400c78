import { Lane, type Ticket } from './lane.js';
import type { RateLimit } from './rate-window.js';

/** A budget a call counts against: `key` names it (platform, workspace or app, method, maybe a channel). */
export interface LaneSpec {
  key: string;
  limits: readonly RateLimit[];
}

export interface RetryPolicy {
  /** How many times a rate-limited call is tried again before its error is thrown. */
  retries: number;
  /** The wait the platform asked for when `error` is its rate-limited answer, else undefined. */
  retryAfterMs(error: unknown): number | undefined;
  /** Whether `error` is a rate-limited answer that names no wait (counted as such, not retried). */
  rateLimited?(error: unknown): boolean;
}

/** How one attempt ended: answered, refused as too many calls, or failed otherwise. */
export type CallOutcome = 'ok' | 'rate_limited' | 'error';

/**
 * Hears every attempt sent to the platform (a retried 429 is two), by the caller's name for the method
 * (metrics). It runs on the call's path: cheap, and never throws.
 */
export type CallObserver = (method: string, outcome: CallOutcome) => void;

export interface PacerOptions {
  now?: (() => number) | undefined;
  onCall?: CallObserver | undefined;
}

/** A repeating caller's part of a lane's budget. */
export interface Share {
  /** The spacing this caller keeps between its calls; grows with the number of callers sharing. */
  intervalMs(): number;
  leave(): void;
}

/** One lane after the other, in a fixed order, so callers on the same lanes keep their order. */
async function acquireAll(lanes: readonly Lane[]): Promise<Ticket[]> {
  const tickets: Ticket[] = [];
  for (const lane of lanes) tickets.push(await lane.acquire());
  return tickets;
}

/** Lanes are made per channel, card or message; past this many, idle ones are forgotten. */
const laneSweepThreshold = 512;

/**
 * The one pacing layer for platform Web API calls: every call waits for room in each lane it counts against,
 * and a rate-limited answer closes only the most specific of them for the Retry-After the platform gave, so
 * one method's 429 never holds calls of another method or conversation.
 *
 * In-process only, on purpose. Sharing budgets through Postgres would cost a statement per platform call (an
 * append every few hundred milliseconds per reply) and a shared clock, to protect a setup Butler does not
 * favour: several processes per workspace add little on the machines measured (the benchmark's 2 processes
 * gave 0.98–1.20× one). When several processes do share a workspace, each paces itself to the whole budget
 * and the overshoot comes back as 429s, which this layer absorbs per method: replies slow down, nothing is lost.
 */
export class Pacer {
  private readonly lanes = new Map<string, Lane>();
  private readonly now: () => number;
  private readonly onCall: CallObserver;

  constructor(options: PacerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.onCall = options.onCall ?? (() => {});
  }

  /**
   * Waits for room in every lane, runs `attempt`, and retries it after a rate-limited answer. `method` names
   * the call to the observer (a bounded set: the platform's method, never an id).
   */
  async run<T>(
    method: string,
    specs: readonly LaneSpec[],
    attempt: () => Promise<T>,
    policy: RetryPolicy,
  ): Promise<T> {
    const lanes = specs.map((spec) => this.lane(spec));
    return this.attempt(method, lanes, await acquireAll(lanes), attempt, policy);
  }

  /**
   * Like `run`, but only when every lane has room now; undefined (and nothing sent) when one has none. For
   * callers that can choose a cheaper way instead of waiting.
   */
  runIfFree<T>(
    method: string,
    specs: readonly LaneSpec[],
    attempt: () => Promise<T>,
    policy: RetryPolicy,
  ): Promise<T> | undefined {
    const lanes = specs.map((spec) => this.lane(spec));
    if (!lanes.every((lane) => lane.free())) return undefined;
    return this.attempt(
      method,
      lanes,
      lanes.map((lane) => lane.takeNow()),
      attempt,
      policy,
    );
  }

  share(spec: LaneSpec): Share {
    const lane = this.lane(spec);
    const sharer = lane.join();
    return { intervalMs: () => lane.shareIntervalMs(sharer), leave: () => lane.leave(sharer) };
  }

  private async attempt<T>(
    method: string,
    lanes: readonly Lane[],
    firstTickets: readonly Ticket[],
    attempt: () => Promise<T>,
    policy: RetryPolicy,
  ): Promise<T> {
    let tickets = firstTickets;
    for (let retry = 0; ; retry++) {
      try {
        const result = await attempt();
        this.onCall(method, 'ok');
        return result;
      } catch (error) {
        const waitMs = policy.retryAfterMs(error);
        const limited = waitMs !== undefined || policy.rateLimited?.(error) === true;
        this.onCall(method, limited ? 'rate_limited' : 'error');
        const specific = lanes.at(-1);
        if (waitMs === undefined || !specific) throw error;
        specific.backOff(waitMs);
        if (retry >= policy.retries) throw error;
      } finally {
        lanes.forEach((lane, index) => {
          const ticket = tickets[index];
          if (ticket) lane.answered(ticket);
        });
      }
      tickets = await acquireAll(lanes);
    }
  }

  private lane(spec: LaneSpec): Lane {
    let lane = this.lanes.get(spec.key);
    if (!lane) {
      if (this.lanes.size >= laneSweepThreshold) this.forgetIdleLanes();
      lane = new Lane(spec.limits, this.now);
      this.lanes.set(spec.key, lane);
    }
    return lane;
  }

  private forgetIdleLanes(): void {
    for (const [key, lane] of this.lanes) if (lane.idle()) this.lanes.delete(key);
  }
}
