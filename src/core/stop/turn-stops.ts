import type { Person } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';

/**
 * Stopping a running turn, from any process. A stop is a row in the database (`StopRepository`); the
 * process running the conversation's turn polls for rows of its running turns every `pollMs` and aborts
 * the one asked (a request older than the turn is not for it). Polling costs one indexed read per interval
 * while turns run, and nothing while none do; it needs no LISTEN connection, so it works on PGlite too.
 */

export interface TurnStop {
  /** Aborts when someone stops the turn. */
  readonly signal: AbortSignal;
  /** Who stopped it, once someone has. */
  readonly stoppedBy: Person | undefined;
  /** The turn is over: stop watching, and forget the request that stopped it. */
  release(): Promise<void>;
}

interface Running {
  startedAt: Date;
  controller: AbortController;
  stoppedBy?: Person;
  /** A request for the conversation was seen while the turn ran (acted on, or older than the turn). */
  seenRequest?: boolean;
}

export class TurnStops {
  private readonly running = new Map<string, Set<Running>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly pollMs = 250,
  ) {}

  /** Records a request to stop the turn running in the conversation; false when none is running. */
  request(conversationKey: string, by: Person): Promise<boolean> {
    return this.store.stops.request(conversationKey, by);
  }

  /** Watches a turn that starts now in the conversation. */
  track(conversationKey: string): TurnStop {
    // A request stored in the same second as the turn's start counts for it: clocks of two processes differ.
    const entry: Running = { startedAt: new Date(Date.now() - 1000), controller: new AbortController() };
    const entries = this.running.get(conversationKey) ?? new Set<Running>();
    entries.add(entry);
    this.running.set(conversationKey, entries);
    this.timer ??= setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    return {
      signal: entry.controller.signal,
      get stoppedBy() {
        return entry.stoppedBy;
      },
      release: async () => {
        entries.delete(entry);
        if (entries.size === 0) this.running.delete(conversationKey);
        if (this.running.size === 0) this.close();
        // A request the turn saw is spent: it must not stop the conversation's next turn.
        if (entry.seenRequest) await this.store.stops.clear(conversationKey, new Date()).catch(() => {});
      },
    };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.running.size === 0) return;
    this.polling = true;
    try {
      for (const request of await this.store.stops.pending([...this.running.keys()])) {
        for (const entry of this.running.get(request.conversationKey) ?? []) {
          entry.seenRequest = true;
          if (entry.stoppedBy || request.requestedAt < entry.startedAt) continue;
          entry.stoppedBy = request.requestedBy;
          entry.controller.abort(
            new Error(`stopped by ${request.requestedBy.name ?? request.requestedBy.id}`),
          );
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'could not look for stop requests');
    } finally {
      this.polling = false;
    }
  }
}
