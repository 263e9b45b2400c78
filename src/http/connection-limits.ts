import type { Socket } from 'node:net';
import type { Logger } from '../core/contracts/logger.js';

/**
 * Bounds on open sockets, so idle or stalled clients cannot use up the process's file descriptors.
 * A socket is idle while no request of it is being answered: waiting for its first request (just
 * connected, or sending headers) or kept alive between requests. When a new socket would go over the cap
 * (overall, or for its remote address), an idle socket (of that address) is closed to make room: the
 * longest waiting for its first request, else the longest kept alive. A stalled client is what we want
 * gone; a client that was answered before keeps its connection unless there is no other, and then
 * reconnects. Only when every socket is busy is the new one refused.
 * API and console requests may keep at most `maxConnections - reservedConnections` sockets busy, so the
 * reserve is always there for webhooks and health checks.
 *
 * Idle sockets also have a deadline of their own (`idleDeadlines`): Node 20's `headersTimeout` does not close a
 * socket that sent part of its headers and stalled (measured: none of 20 such sockets closed in 6 s with a 3 s
 * deadline), so a slow-client flood would otherwise hold its sockets until the cap pushed them out.
 */

export interface ConnectionLimitSettings {
  maxConnections: number;
  /** Behind a reverse proxy every client has the proxy's address. */
  maxConnectionsPerAddress: number;
  reservedConnections: number;
}

interface Tracked {
  address: string;
  /** Requests of this socket being answered (more than one only when a client pipelines). */
  busy: number;
}

/** Idle sockets, longest idle first (a Set keeps insertion order). */
interface IdleSockets {
  /** Never sent a complete request. */
  waiting: Set<Socket>;
  /** Answered before; kept alive for the next request. */
  between: Set<Socket>;
}

interface AddressGroup extends IdleSockets {
  open: number;
}

const idleSockets = (): IdleSockets => ({ waiting: new Set(), between: new Set() });

/** Refusals and closings are logged at most this often, with counts, so a flood does not flood the log. */
const reportEveryMs = 60_000;

/** How long a socket may stay idle: before its first complete request, and kept alive between requests. */
export interface IdleDeadlines {
  waitingMs: number;
  betweenMs: number;
}

export class ConnectionLimits {
  private readonly sockets = new Map<Socket, Tracked>();
  /** When each idle socket became idle (connected, or answered). */
  private readonly idleSince = new Map<Socket, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly idle = idleSockets();
  private readonly addresses = new Map<string, AddressGroup>();
  private apiInFlight = 0;
  private counts = { closedIdle: 0, refused: 0, apiBusy: 0 };
  private lastReport = 0;

  constructor(
    private readonly settings: ConnectionLimitSettings,
    private readonly logger: Logger,
    private readonly deadlines?: IdleDeadlines,
  ) {}

  /** Starts closing sockets idle past their deadline, checking every `everyMs`. */
  startDeadlines(everyMs: number): void {
    if (!this.deadlines || this.sweeper) return;
    this.sweeper = setInterval(() => this.closeOverdue(Date.now()), everyMs);
    this.sweeper.unref();
  }

  stopDeadlines(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** A new connection: make room for it, or refuse it. */
  admit(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    const group = this.group(address);
    const roomForAddress = group.open < this.settings.maxConnectionsPerAddress || this.closeOneIdle(group);
    const room =
      roomForAddress && (this.sockets.size < this.settings.maxConnections || this.closeOneIdle(this.idle));
    if (!room) {
      if (group.open === 0) this.addresses.delete(address);
      this.refuse(socket, address);
      return;
    }
    this.sockets.set(socket, { address, busy: 0 });
    group.open += 1;
    group.waiting.add(socket);
    this.idle.waiting.add(socket);
    this.idleSince.set(socket, Date.now());
    socket.once('close', () => this.forget(socket));
  }

  /** A request of `socket` is being answered until `finished` fires. */
  requestStarted(socket: Socket, finished: (done: () => void) => void): void {
    const tracked = this.sockets.get(socket);
    if (!tracked) return;
    tracked.busy += 1;
    const group = this.addresses.get(tracked.address);
    for (const idle of [this.idle, group]) {
      idle?.waiting.delete(socket);
      idle?.between.delete(socket);
    }
    this.idleSince.delete(socket);
    finished(() => {
      tracked.busy -= 1;
      if (tracked.busy > 0 || !this.sockets.has(socket)) return;
      this.idle.between.add(socket);
      group?.between.add(socket);
      this.idleSince.set(socket, Date.now());
    });
  }

  /** Closes every socket that is not answering a request (at shutdown: Node stops its deadlines then). */
  closeIdle(): void {
    for (const socket of [...this.idle.waiting, ...this.idle.between]) {
      this.forget(socket);
      socket.destroy();
    }
  }

  /**
   * Takes one of the places API and console requests may hold (every socket but the reserve), or says
   * there is none. The returned function gives it back.
   */
  takeApiPlace(): (() => void) | undefined {
    const { maxConnections, reservedConnections } = this.settings;
    if (this.apiInFlight >= maxConnections - reservedConnections) {
      this.counts.apiBusy += 1;
      this.report();
      return undefined;
    }
    this.apiInFlight += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.apiInFlight -= 1;
    };
  }

  /** Closes the sockets idle past their deadline; each set is in the order its sockets became idle. */
  private closeOverdue(now: number): void {
    if (!this.deadlines) return;
    const sets: Array<[Set<Socket>, number]> = [
      [this.idle.waiting, this.deadlines.waitingMs],
      [this.idle.between, this.deadlines.betweenMs],
    ];
    let closed = 0;
    for (const [sockets, deadlineMs] of sets) {
      for (const socket of sockets) {
        if (now - (this.idleSince.get(socket) ?? now) < deadlineMs) break;
        this.forget(socket);
        socket.destroy();
        closed += 1;
      }
    }
    // A deadline passing is routine, not a limit reached: no warning.
    if (closed > 0) this.logger.debug({ closed }, 'idle connections closed past their deadline');
  }

  private group(address: string): AddressGroup {
    let group = this.addresses.get(address);
    if (!group) {
      group = { open: 0, ...idleSockets() };
      this.addresses.set(address, group);
    }
    return group;
  }

  /** Closes the longest-waiting socket, else the longest kept alive; false when none is idle. */
  private closeOneIdle(idle: IdleSockets): boolean {
    const [oldest] = idle.waiting.size > 0 ? idle.waiting : idle.between;
    if (!oldest) return false;
    // Forgotten now, not on its `close` event: the new socket takes its place at once.
    this.forget(oldest);
    oldest.destroy();
    this.counts.closedIdle += 1;
    this.report();
    return true;
  }

  private refuse(socket: Socket, address: string): void {
    socket.destroy();
    this.counts.refused += 1;
    this.logger.debug({ address }, 'connection refused: every open connection is busy');
    this.report();
  }

  private forget(socket: Socket): void {
    const tracked = this.sockets.get(socket);
    if (!tracked) return;
    this.sockets.delete(socket);
    this.idleSince.delete(socket);
    const group = this.addresses.get(tracked.address);
    for (const idle of [this.idle, group]) {
      idle?.waiting.delete(socket);
      idle?.between.delete(socket);
    }
    if (!group) return;
    group.open -= 1;
    if (group.open === 0) this.addresses.delete(tracked.address);
  }

  private report(): void {
    const now = Date.now();
    if (now - this.lastReport < reportEveryMs) return;
    this.lastReport = now;
    this.logger.warn(
      { ...this.counts, open: this.sockets.size, ...this.settings },
      'connection limits reached: idle connections closed, new ones or API requests refused',
    );
    this.counts = { closedIdle: 0, refused: 0, apiBusy: 0 };
  }
}
