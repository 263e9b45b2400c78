import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { ButlerError } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
import { type EventRoute, openPostgresDatabase, redactUrl } from './postgres-open.js';
import * as schema from './schema.js';
import { toStorageError } from './storage-errors.js';

/** Both drivers are assignable to this; repositories only ever see it. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface OpenDatabase {
  db: Database;
  kind: 'postgres' | 'pglite';
  /** Where it lives, without credentials (for the start-up banner). */
  location: string;
  /** Resolves when the database answers `select 1` within the timeout; rejects with the reason otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** The postgres.js client (Postgres only): LISTEN needs a driver connection that drizzle does not expose. */
  postgresClient?: postgres.Sql;
  /** Where LISTEN and NOTIFY go (Postgres only): the direct server behind a pooler, else the pool's server. */
  eventsClient?: postgres.Sql;
  /** DATABASE_URL is a transaction pooler (configured with DATABASE_DIRECT_URL, or found so at start). */
  pooled: boolean;
  /** How live events reach other processes: LISTEN, a table read a few times a second, or in process (PGlite). */
  events: EventRoute | 'local';
  close(): Promise<void>;
}

/** What the banner and /readyz say of a pooled database's live events; undefined when nothing is to say. */
export function poolerNote(database: Pick<OpenDatabase, 'pooled' | 'events'>): string | undefined {
  if (!database.pooled) return undefined;
  return database.events === 'table'
    ? 'DATABASE_URL is a transaction pooler: live events are read from the database a few times a second (set DATABASE_DIRECT_URL to the server for LISTEN)'
    : 'DATABASE_URL is a transaction pooler: migrations and live events use DATABASE_DIRECT_URL';
}

export const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** `ping` as a bounded check: a hung connection answers /readyz with a reason, not a hang. */
async function pingWithin(query: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([query(), timeout]);
  } catch (error) {
    throw toStorageError('ping', error);
  } finally {
    clearTimeout(timer);
  }
}

export interface OpenDatabaseOptions {
  /** Postgres connection string; undefined = embedded PGlite. */
  url: string | undefined;
  /** The Postgres server itself, when `url` is a transaction pooler: migrations and LISTEN go there. */
  directUrl?: string | undefined;
  /** PGlite data directory, or `memory://` for a throwaway in-memory database. */
  dataDir: string;
  logger: Logger;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<OpenDatabase> {
  return options.url ? openPostgres(options.url, options) : openPglite(options.dataDir, options.logger);
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<OpenDatabase> {
  const opened = await openPostgresDatabase({
    url,
    directUrl: options.directUrl,
    migrationsFolder,
    poolSize: options.poolSize,
    logger: options.logger,
  });
  const { db } = opened;
  options.logger.info({ database: redactUrl(url), pooled: opened.pooled }, 'database ready (postgres)');
  return {
    db,
    kind: 'postgres',
    location: redactUrl(url),
    ping: (timeoutMs) => pingWithin(() => db.execute(sql`select 1`), timeoutMs),
    postgresClient: opened.client,
    eventsClient: opened.eventsClient,
    pooled: opened.pooled,
    events: opened.events,
    close: opened.close,
  };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** PGlite does not lock its data directory; two processes writing one would corrupt it. */
function takeLock(lockPath: string): () => void {
  if (existsSync(lockPath)) {
    const holder = Number(readFileSync(lockPath, 'utf8'));
    if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
      throw new ButlerError(
        'database_locked',
        `The embedded database is in use by process ${holder} (${lockPath}). Stop it, or set DATABASE_URL to share a Postgres server.`,
      );
    }
  }
  writeFileSync(lockPath, String(process.pid));
  return () => rmSync(lockPath, { force: true });
}

async function openPglite(dataDir: string, logger: Logger): Promise<OpenDatabase> {
  // Loaded on first use: PGlite and its drizzle driver add about 40 MB of resident memory, which a
  // Postgres deployment never needs.
  const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const inMemory = dataDir.startsWith('memory://');
  let releaseLock = () => {};
  let location = dataDir;
  let client: PGlite;
  let creating = inMemory;
  if (inMemory) {
    client = new PGlite();
  } else {
    const directory = resolve(dataDir);
    mkdirSync(directory, { recursive: true });
    releaseLock = takeLock(join(directory, 'butler.lock'));
    location = join(directory, 'pglite');
    creating = !existsSync(location);
    client = new PGlite(location);
  }
  // The first start creates the embedded database: several seconds with nothing else to show.
  logger.info(
    { database: location },
    creating
      ? 'first start: creating the embedded database (about 10 s; later starts take a few)'
      : 'opening the embedded database and applying migrations',
  );
  try {
    const db = drizzlePglite({ client, schema });
    await migratePglite(db, { migrationsFolder });
    logger.info({ database: location }, 'database ready (embedded PGlite)');
    return {
      db,
      kind: 'pglite',
      location,
      pooled: false,
      events: 'local',
      ping: (timeoutMs) => pingWithin(() => db.execute(sql`select 1`), timeoutMs),
      close: async () => {
        await client.close();
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}
