import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ButlerError } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
import { applyMigrations } from './migrate.js';
import * as schema from './schema.js';

/**
 * Opening Postgres, directly or behind a transaction pooler (PgBouncer, Supavisor, Neon's pooler, RDS Proxy).
 * A pooler hands each transaction to any server connection, so what lives in a session does not hold there:
 * settings sent at connect (PgBouncer refuses `statement_timeout` as a startup parameter), named prepared
 * statements, session advisory locks and LISTEN. Butler migrates in one transaction under a transaction lock
 * (migrate.ts), sends its statement timeout with each transaction instead of at connect, prepares nothing,
 * and listens through the server itself (DATABASE_DIRECT_URL) or, without it, reads live events from a table.
 */

/**
 * While the database is unreachable, a platform's webhook must get a 5xx well inside its 3 s (so that it
 * retries) rather than hang: connecting and every statement are bounded. Butler's statements take
 * milliseconds; one that takes seconds is a sign of trouble, not work to wait for. The statement bound stays
 * below how long an approval click waits for its decision (2.3 s): a stuck decision fails while the clicker
 * can still be told to try again, and a merely slow one (a loaded machine) still lands before the ack.
 */
export const connectTimeoutSeconds = 1.5;
export const statementTimeoutMs = 2000;
/** Opening at start-up may wait a little longer (a server waking up), never without an end. */
const startupConnectSeconds = 5;
/** How long a NOTIFY may take to come back through LISTEN before live events are read from a table. */
const listenProbeMs = 1500;

/** How live events travel between processes on this database. */
export type EventRoute = 'listen' | 'table';

export function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** A database that refused or never answered at start-up: named by its host, with the reason. */
export class DatabaseUnreachableError extends ButlerError {
  constructor(url: string, variable: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('database_unreachable', `${variable} (${new URL(url).host}): ${reason}`, { cause });
  }
}

const quietClient = (url: string, extra: postgres.Options<Record<string, never>> = {}) =>
  postgres(url, { max: 1, onnotice: () => {}, connect_timeout: startupConnectSeconds, ...extra });

async function withClient<T>(client: postgres.Sql, work: (client: postgres.Sql) => Promise<T>): Promise<T> {
  try {
    return await work(client);
  } finally {
    await client.end({ timeout: 1 });
  }
}

/** Whether the server (or the pooler in front of it) refuses settings sent at connect, as PgBouncer does. */
async function refusesStartupSettings(url: string): Promise<boolean> {
  const client = quietClient(url, { connection: { statement_timeout: statementTimeoutMs } });
  try {
    await withClient(client, (probe) => probe`select 1`);
    return false;
  } catch (error) {
    if (error instanceof Error && /unsupported startup parameter/i.test(error.message)) return true;
    throw error;
  }
}

/** Whether a NOTIFY comes back through LISTEN on this URL: not behind a transaction pooler. */
async function listenWorks(url: string): Promise<boolean> {
  const listener = quietClient(url);
  const channel = `butler_probe_${randomUUID().replaceAll('-', '')}`;
  return withClient(listener, async () => {
    let heard: () => void = () => {};
    const back = new Promise<boolean>((resolve) => {
      heard = () => resolve(true);
      setTimeout(() => resolve(false), listenProbeMs).unref();
    });
    await listener.listen(channel, () => heard());
    await withClient(quietClient(url), (sender) => sender.notify(channel, 'probe'));
    return back;
  });
}

/**
 * Every transaction begins by bounding its statements (SET LOCAL): behind a pooler the timeout cannot be sent at
 * connect. Statements outside transactions are bounded by the callers' own deadlines (the HTTP routes' 2.5 s).
 */
function boundTransactions(db: ReturnType<typeof drizzlePostgres<typeof schema>>): void {
  const transaction = db.transaction.bind(db);
  db.transaction = (work, config) =>
    transaction(async (tx) => {
      await tx.execute(sql.raw(`set local statement_timeout = ${statementTimeoutMs}`));
      return work(tx);
    }, config);
}

export interface OpenedPostgres {
  db: ReturnType<typeof drizzlePostgres<typeof schema>>;
  client: postgres.Sql;
  /** Where LISTEN and NOTIFY go: the direct server, or the pool when it is the server. */
  eventsClient: postgres.Sql;
  pooled: boolean;
  events: EventRoute;
  close(): Promise<void>;
}

export async function openPostgresDatabase(options: {
  url: string;
  directUrl?: string | undefined;
  migrationsFolder: string;
  poolSize?: number | undefined;
  logger: Logger;
}): Promise<OpenedPostgres> {
  const { url, directUrl, logger } = options;
  const migrateUrl = directUrl ?? url;
  const variable = directUrl ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
  logger.info({ database: redactUrl(migrateUrl) }, 'connecting to Postgres and applying migrations');
  try {
    const applied = await withClient(quietClient(migrateUrl), (client) =>
      applyMigrations(client, options.migrationsFolder),
    );
    if (applied > 0) logger.info({ applied }, 'migrations applied');
  } catch (error) {
    throw new DatabaseUnreachableError(migrateUrl, variable, error);
  }
  let pooled = directUrl !== undefined;
  let events: EventRoute = 'listen';
  try {
    if (!pooled) pooled = await refusesStartupSettings(url);
    if (!directUrl && !(await listenWorks(url))) {
      pooled = true;
      events = 'table';
    }
  } catch (error) {
    throw new DatabaseUnreachableError(url, 'DATABASE_URL', error);
  }
  const client = postgres(url, {
    max: options.poolSize ?? 10,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds,
    // Behind a pooler: no named prepared statements (another server connection would not know them), and the
    // statement timeout with each transaction rather than at connect.
    ...(pooled ? { prepare: false } : { connection: { statement_timeout: statementTimeoutMs } }),
  });
  const db = drizzlePostgres({ client, schema });
  if (pooled) boundTransactions(db);
  const eventsClient = directUrl
    ? postgres(directUrl, { max: 1, onnotice: () => {}, connect_timeout: connectTimeoutSeconds })
    : client;
  if (pooled)
    logger.info(
      { events: events === 'listen' ? 'LISTEN on DATABASE_DIRECT_URL' : 'read from a table' },
      'DATABASE_URL is a transaction pooler',
    );
  return {
    db,
    client,
    eventsClient,
    pooled,
    events,
    close: async () => {
      await client.end({ timeout: 5 });
      if (eventsClient !== client) await eventsClient.end({ timeout: 5 });
    },
  };
}
