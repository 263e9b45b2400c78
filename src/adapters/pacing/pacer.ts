import { Lane, type Priority, type Ticket } from './lane.js';
import type { RateLimit } from './rate-window.js';

/** A budget a call counts against: `key` names it (platform, workspace or app, method, maybe a channel). */
export interface LaneSpec {
  key: string;
  limits: readonly RateLimit[];
  /**
   * Only this process calls it (a card this process streams into): its whole limit is this process's. Other
   * lanes get this process's share of theirs (`PacerOptions.share`).
   */
  owned?: boolean;
}

export interface RunOptions {
  /** Who goes first when the lane is full (default `reply`). */
  priority?: Priority;
  /** Gives up the wait (the call then never goes): rejects with WaitAbandoned. */
  signal?: AbortSignal;
}

/** A call's room taken in advance (the stop of a stream, reserved when it starts); `release` if unused. */
export interface Reservation {
  readonly method: string;
  release(): void;
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
  /**
   * This process's part of the workspace's (or app's) budgets, between 0 and 1: with several processes serving
   * it, each paces to its part so that together they stay inside the platform's limits (default 1).
   */
  share?: (() => number) | undefined;
}

/** A repeating caller's part of a lane's budget. */
export interface Share {
  /** The spacing this caller keeps between its calls; grows with the number of callers sharing. */
  intervalMs(): number;
  leave(): void;
}

/**
 * One lane after the other, in a fixed order, so callers on the same lanes keep their order. A wait given up
 * halfway gives back the tickets already taken.
 */
async function acquireAll(lanes: readonly Lane[], options: RunOptions): Promise<Ticket[]> {
  const tickets: Ticket[] = [];
  try {
    for (const lane of lanes) tickets.push(await lane.acquire(options.priority, options.signal));
  } catch (error) {
    for (const [index, ticket] of tickets.entries()) lanes[index]?.release(ticket);
    throw error;
  }
  return tickets;
}

/** Lanes are made per channel, card or message; past this many, idle ones are forgotten. */
const laneSweepThreshold = 512;

/**
 * The one pacing layer for platform Web API calls: every call waits for room in each lane it counts against,
 * and a rate-limited answer closes only the most specific of them for the Retry-After the platform gave, so
 * one method's 429 never holds calls of another method or conversation.
 *
 * Several processes serving one workspace split its budgets instead of sharing a counter: each paces to its
 * `share` (one over the processes alive, from the database's roster), so together they stay inside the
 * platform's count without a statement per platform call. A share that is briefly stale (a process just
 * started or died) overshoots by at most one process's part for a heartbeat; the platform's 429s are then
 * absorbed per method, as below.
 */
export class Pacer {
  private readonly lanes = new Map<string, Lane>();
  private readonly reservations = new Map<Reservation, { lane: Lane; ticket: Ticket }>();
  private readonly now: () => number;
  private readonly onCall: CallObserver;
  private readonly processShare: () => number;

  constructor(options: PacerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.onCall = options.onCall ?? (() => {});
    this.processShare = options.share ?? (() => 1);
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
    options: RunOptions = {},
  ): Promise<T> {
    const lanes = specs.map((spec) => this.lane(spec));
    return this.attempt(method, lanes, await acquireAll(lanes, options), attempt, policy, options);
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
      {},
    );
  }

  /**
   * Takes room in `spec`'s lane now for a call made later (`runReserved`), or undefined when it has none. The
   * room counts from now until a window after that call is answered.
   */
  reserve(method: string, spec: LaneSpec): Reservation | undefined {
    const lane = this.lane(spec);
    if (!lane.free()) return undefined;
    const reservation: Reservation = {
      method,
      release: () => {
        const held = this.reservations.get(reservation);
        this.reservations.delete(reservation);
        if (held) held.lane.release(held.ticket);
      },
    };
    this.reservations.set(reservation, { lane, ticket: lane.takeNow() });
    return reservation;
  }

  /** Runs `attempt` on room reserved earlier, without waiting. Throws if the reservation was used or released. */
  runReserved<T>(reservation: Reservation, attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
    const held = this.reservations.get(reservation);
    if (!held) throw new Error(`reservation for ${reservation.method} already used or released`);
    this.reservations.delete(reservation);
    return this.attempt(reservation.method, [held.lane], [held.ticket], attempt, policy, {});
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
    options: RunOptions,
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
      tickets = await acquireAll(lanes, options);
    }
  }

  private lane(spec: LaneSpec): Lane {
    let lane = this.lanes.get(spec.key);
    if (!lane) {
      if (this.lanes.size >= laneSweepThreshold) this.forgetIdleLanes();
      lane = new Lane(spec.limits, this.now, spec.owned ? undefined : this.processShare);
      this.lanes.set(spec.key, lane);
    }
    return lane;
  }

  private forgetIdleLanes(): void {
    for (const [key, lane] of this.lanes) if (lane.idle()) this.lanes.delete(key);
  }
}
