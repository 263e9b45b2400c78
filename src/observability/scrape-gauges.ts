import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../core/contracts/logger.js';
import type { InboxBacklog } from '../core/contracts/repositories.js';
import type { Store } from '../core/contracts/store.js';

/**
 * Gauges read when Prometheus scrapes, not kept up to date on the hot path: what waits in the database
 * (the same for every process sharing it) and each MCP server's connection.
 */

interface DatabaseState {
  inbox: InboxBacklog;
  approvalsWaiting: number;
  schedules: Partial<Record<(typeof scheduleStatuses)[number], number>>;
}

/** The task statuses shown: active ones run, paused ones (by a person, or after failing) do not. */
const scheduleStatuses = ['active', 'paused'] as const;

export interface ScrapeSources {
  /** Read at each scrape, one cheap statement per read. */
  store: Pick<Store, 'inbox' | 'approvals' | 'schedules'>;
  /** Every configured MCP server, connected now or not. */
  mcpServers(): ReadonlyArray<{ name: string; connected: boolean }>;
  logger: Logger;
}

/** A scrape waits this long for the database, so the page answers within a second even when it hangs. */
const databaseTimeoutMs = 800;

async function readDatabase(store: ScrapeSources['store']): Promise<DatabaseState> {
  const [inbox, approvalsWaiting, schedules] = await Promise.all([
    store.inbox.backlog(),
    store.approvals.countPending(),
    store.schedules.countByStatus(),
  ]);
  return { inbox, approvalsWaiting, schedules };
}

/** Rejects after `ms`: a database that hangs must not hang the scrape. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerScrapeGauges(registry: Registry, sources: ScrapeSources): void {
  const registers = [registry];
  // A read that outlives its scrape (a stalled network) is waited for again, never doubled: scrapes during
  // an outage do not pile statements up on the hung connections.
  let reading: Promise<DatabaseState> | undefined;
  const read = () => {
    reading ??= readDatabase(sources.store).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  // prom-client collects every metric of a scrape at once: the database gauges share one wait.
  let scrape: Promise<DatabaseState | undefined> | undefined;
  const readOnce = () => {
    scrape ??= within(read(), databaseTimeoutMs)
      .catch((error: unknown) => {
        sources.logger.debug({ err: error }, 'metrics: database not read');
        return undefined;
      })
      .finally(() => {
        scrape = undefined;
      });
    return scrape;
  };
  /** A gauge set from the read, NaN when the database did not answer (not 0: nothing is known). */
  const fromDatabase = (name: string, help: string, value: (state: DatabaseState) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const state = await readOnce();
        this.set(state ? value(state) : Number.NaN);
      },
    });

  fromDatabase(
    'butler_inbox_open_events',
    'Inbox events not finished yet (pending or being handled), across every process sharing the database.',
    (state) => state.inbox.open,
  );
  fromDatabase(
    'butler_inbox_oldest_open_event_age_seconds',
    'How long the oldest unfinished inbox event has waited; 0 when none is open.',
    (state) => state.inbox.oldestAgeSeconds,
  );
  fromDatabase(
    'butler_approvals_waiting',
    'Approval requests waiting for a decision, across every process sharing the database.',
    (state) => state.approvalsWaiting,
  );
  new Gauge({
    name: 'butler_scheduled_tasks',
    help: 'Scheduled tasks by status (active, paused), across every process sharing the database.',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      const state = await readOnce();
      for (const status of scheduleStatuses)
        this.set({ status }, state ? (state.schedules[status] ?? 0) : Number.NaN);
    },
  });
  new Gauge({
    name: 'butler_database_up',
    help: 'Whether the database answered this scrape (1) or not (0).',
    registers,
    async collect() {
      this.set((await readOnce()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'butler_mcp_server_up',
    help: 'Each configured MCP server: connected (1) or not (0), its tools left out meanwhile.',
    labelNames: ['server'] as const,
    registers,
    collect() {
      this.reset();
      for (const server of sources.mcpServers()) this.set({ server: server.name }, server.connected ? 1 : 0);
    },
  });
}
