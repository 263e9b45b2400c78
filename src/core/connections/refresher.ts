import type {
  ConnectionOwner,
  ConnectionRecord,
  ConnectionRepository,
} from '../contracts/connection-records.js';
import type { Logger } from '../contracts/logger.js';

/**
 * Refreshes people's tokens: ahead of expiry, or after the server refused one, and only once per owner and server
 * at a time: in this process by a shared promise, across processes by a lease in Postgres. A refresh that
 * stalls ends at `deadlineMs` (its requests carry that deadline), and so does waiting for another process's.
 */

export type Freshness = 'ready' | 'missing';

/** Runs the SDK's refresh for an owner, every request ending by `signal`; true when it saved new tokens. */
export type RefreshRun = (server: string, owner: ConnectionOwner, signal: AbortSignal) => Promise<boolean>;

/** A refresh ahead of expiry by this much, so a call never starts with a token about to lapse. */
const refreshAheadMs = 60_000;
const leasePollMs = 100;

export class Refresher {
  private readonly running = new Map<string, Promise<Freshness>>();

  constructor(
    private readonly connections: ConnectionRepository,
    private readonly run: RefreshRun,
    private readonly deadlineMs: number,
    private readonly logger: Logger,
  ) {}

  /** Refreshed when due; `missing` when there is no connection or the server refused the refresh. */
  async ensureFresh(server: string, ownerKey: string): Promise<Freshness> {
    const record = await this.connections.get(server, ownerKey);
    if (!record) return 'missing';
    if (!record.expiresAt || record.expiresAt.getTime() > Date.now() + refreshAheadMs) return 'ready';
    return this.refresh(server, record);
  }

  /** After the server refused a token of `version`: refresh it, unless someone already did. */
  async afterRejection(server: string, ownerKey: string, version: number): Promise<Freshness> {
    const record = await this.connections.get(server, ownerKey);
    if (!record) return 'missing';
    if (record.version !== version) return 'ready';
    return this.refresh(server, record);
  }

  private refresh(server: string, seen: ConnectionRecord): Promise<Freshness> {
    const key = `${server}\0${seen.ownerKey}`;
    const running = this.running.get(key);
    if (running) return running;
    const refresh = this.underLease(server, seen).finally(() => this.running.delete(key));
    this.running.set(key, refresh);
    return refresh;
  }

  private async underLease(server: string, seen: ConnectionRecord): Promise<Freshness> {
    const { connections } = this;
    const deadline = Date.now() + this.deadlineMs;
    while (!(await connections.takeRefreshLease(server, seen.ownerKey, new Date(deadline)))) {
      // Someone else refreshes: their tokens are ours once they saved them (a new version).
      const now = await connections.get(server, seen.ownerKey);
      if (!now) return 'missing';
      if (now.version !== seen.version) return 'ready';
      if (Date.now() > deadline)
        throw new Error(`the refresh of ${server} by another Butler process did not end in time`);
      await new Promise((resolve) => setTimeout(resolve, leasePollMs));
    }
    try {
      const current = await connections.get(server, seen.ownerKey);
      if (!current) return 'missing';
      if (current.version !== seen.version) return 'ready';
      const owner = { key: current.ownerKey, person: current.owner };
      const saved = await this.run(server, owner, AbortSignal.timeout(Math.max(0, deadline - Date.now())));
      const after = await connections.get(server, seen.ownerKey);
      if (saved && after) {
        this.logger.info({ server, owner: owner.key }, 'connection refreshed');
        return 'ready';
      }
      // The SDK deletes the tokens when the server refused the refresh token (revoked, or reused elsewhere):
      // the person connects again. Kept tokens mean the server failed otherwise (a 5xx): not the person's doing.
      if (after) throw new Error(`the authorization server of ${server} did not refresh the connection`);
      this.logger.warn({ server, owner: owner.key }, 'connection lapsed: the refresh was refused');
      return 'missing';
    } finally {
      await connections.releaseRefreshLease(server, seen.ownerKey);
    }
  }
}
