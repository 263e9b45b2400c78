import type { ButlerEvent, ButlerEventType, EventBus } from '../core/contracts/event-bus.js';
import type { Logger } from '../core/contracts/logger.js';
import { truncateText } from '../core/text/index.js';
import type { OpenDatabase } from './database.js';
import { tableTransport } from './event-table.js';
import { localTransport, postgresTransport } from './event-transport.js';

export { eventChannel } from './event-transport.js';

/**
 * The event bus over the database Butler already shares. Behind a transaction pooler without
 * DATABASE_DIRECT_URL, LISTEN cannot work, and events travel through a table every process reads a few times
 * a second (event-table.ts). Otherwise, on Postgres, events go out with `pg_notify` on
 * one channel and come back through one LISTEN connection per process (postgres.js opens it on the first
 * subscriber and re-listens after it reconnects), so every process, the publisher included, sees every
 * event. Embedded PGlite belongs to a single process (lockfile), so events are handed over in process:
 * a NOTIFY would only loop back to the same process, as another query on the one connection turns use.
 *
 * Publishing never blocks a turn: events wait in a bounded queue that one loop drains in order.
 * While the database is unreachable, events that cannot be sent within `maxAgeMs` are dropped.
 */

/** Postgres rejects a NOTIFY payload of 8000 bytes or more (default build). */
const maxPayloadBytes = 7999;
/** Events waiting to be sent; beyond this the oldest are dropped (a live view wants the newest). */
const maxQueued = 1000;
/** An event older than this when its turn comes to be sent is stale for a live view. */
const maxAgeMs = 30_000;
/** `close()` gives queued events this long to go out. */
const closeDeadlineMs = 2000;
/** An oversized compaction error is cut to this many characters before the event is dropped instead. */
const trimmedErrorLength = 500;

const eventTypes: Record<ButlerEventType, true> = {
  turn_started: true,
  turn_finished: true,
  approval_requested: true,
  approval_decided: true,
  approval_voted: true,
  approval_expired: true,
  compaction: true,
};

/** Another client may NOTIFY on the channel too: only well-formed Butler events reach subscribers. */
function decode(payload: string): ButlerEvent | undefined {
  try {
    const value: unknown = JSON.parse(payload);
    if (typeof value !== 'object' || value === null) return undefined;
    const { type, at, conversationKey } = value as Record<string, unknown>;
    if (typeof type !== 'string' || !Object.hasOwn(eventTypes, type)) return undefined;
    if (typeof at !== 'string' || typeof conversationKey !== 'string') return undefined;
    return value as ButlerEvent;
  } catch {
    return undefined;
  }
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** The event as a NOTIFY payload, trimmed to fit, or undefined when it cannot fit. */
function encode(event: ButlerEvent): string | undefined {
  const payload = JSON.stringify(event);
  if (byteLength(payload) <= maxPayloadBytes) return payload;
  if (event.type === 'compaction' && event.error !== undefined) {
    const trimmed = JSON.stringify({ ...event, error: truncateText(event.error, trimmedErrorLength + 1) });
    if (byteLength(trimmed) <= maxPayloadBytes) return trimmed;
  }
  return undefined;
}

interface Queued {
  payload: string;
  queuedAt: number;
}

export function createEventBus(database: OpenDatabase, logger: Logger): EventBus {
  const log = logger.child({ component: 'event-bus' });
  const transport =
    database.events === 'table'
      ? tableTransport(database.db, log)
      : database.eventsClient
        ? postgresTransport(database.eventsClient, log)
        : localTransport();
  const listeners = new Set<(event: ButlerEvent) => void>();
  const queue: Queued[] = [];
  let draining: Promise<void> | undefined;
  /** Settles once LISTEN is in place (or failed): sends wait for it, so a subscriber sees events from now on. */
  let listening: Promise<void> | undefined;
  /** Set by `close()`: publishing stops, what is queued gets until the deadline to go out. */
  let closing: Promise<void> | undefined;
  let closed = false;
  let failing = false;
  let overflowing = false;

  const receive = (payload: string) => {
    if (closed) return;
    const event = decode(payload);
    if (!event) {
      log.debug({ bytes: byteLength(payload) }, 'ignored a malformed event on the channel');
      return;
    }
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        log.warn({ err: error, eventType: event.type }, 'event listener failed');
      }
    }
  };

  const sendNext = async (item: Queued) => {
    if (Date.now() - item.queuedAt > maxAgeMs) {
      log.debug('dropped a stale event');
      return;
    }
    try {
      await transport.send(item.payload);
      if (failing) log.info('publishing events again');
      failing = false;
    } catch (error) {
      if (!failing) log.warn({ err: error }, 'publishing an event failed; dropping events until it works');
      else log.debug({ err: error }, 'publishing an event failed');
      failing = true;
      // While shutting down, one failure is enough: the rest would only wait on the same broken database.
      if (closing) queue.length = 0;
    }
  };

  const drain = async () => {
    await listening;
    for (let item = queue.shift(); item; item = queue.shift()) await sendNext(item);
    draining = undefined;
  };

  const startDraining = () => {
    // setImmediate: the publisher's code carries on before any send or delivery starts.
    draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
  };

  const startListening = () => {
    listening ??= transport.listen(receive);
  };

  const shutDown = async () => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, closeDeadlineMs);
    });
    await Promise.race([draining, deadline]);
    clearTimeout(timer);
    if (queue.length > 0) log.debug({ dropped: queue.length }, 'events still queued at close; dropped');
    queue.length = 0;
    closed = true;
    listeners.clear();
    await listening;
    await transport.stop().catch((error: unknown) => log.debug({ err: error }, 'unlisten failed'));
  };

  return {
    publish(event) {
      try {
        if (closing) {
          log.debug({ eventType: event.type }, 'event published after close; dropped');
          return;
        }
        const payload = encode(event);
        if (payload === undefined) {
          log.debug({ eventType: event.type }, 'event too large for the channel; dropped');
          return;
        }
        queue.push({ payload, queuedAt: Date.now() });
        if (queue.length > maxQueued) {
          queue.shift();
          if (!overflowing) log.warn({ maxQueued }, 'event queue full; dropping the oldest events');
          overflowing = true;
        } else if (queue.length < maxQueued / 2) {
          overflowing = false;
        }
        startDraining();
      } catch (error) {
        log.debug({ err: error }, 'publishing an event failed');
      }
    },

    subscribe(listener) {
      if (closing) return () => {};
      listeners.add(listener);
      startListening();
      return () => {
        listeners.delete(listener);
      };
    },

    close() {
      closing ??= shutDown();
      return closing;
    },
  };
}
