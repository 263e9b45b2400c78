import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { ButlerError } from '../core/contracts/errors.js';
import type { Logger } from '../core/contracts/logger.js';
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
  close(): Promise<void>;
}

export const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Arbitrary but fixed: every Butler process migrating the same database contends on this key. */
const migrationLockKey = 7_461_001;

/**
 * While the database is unreachable, a platform's webhook must get a 5xx well inside its 3 s (so that it
 * retries) rather than hang: connecting and every statement are bounded. Butler's statements take
 * milliseconds; one that takes seconds is a sign of trouble, not work to wait for. The statement bound stays
 * below how long an approval click waits for its decision (2.3 s): a stuck decision fails while the clicker
 * can still be told to try again, and a merely slow one (a loaded machine) still lands before the ack.
 */
const connectTimeoutSeconds = 1.5;
const statementTimeoutMs = 2000;

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
  /** PGlite data directory, or `memory://` for a throwaway in-memory database. */
  dataDir: string;
  logger: Logger;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<OpenDatabase> {
  return options.url ? openPostgres(options.url, options) : openPglite(options.dataDir, options.logger);
}

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<OpenDatabase> {
  // Migrate on a dedicated single connection under a session advisory lock: several processes may
  // start at once, and drizzle's migrator takes no lock of its own.
  const migrator = postgres(url, { max: 1, onnotice: () => {} });
  options.logger.info({ database: redactUrl(url) }, 'connecting to Postgres and applying migrations');
  try {
    await migrator`select pg_advisory_lock(${migrationLockKey})`;
    await migratePostgres(drizzlePostgres({ client: migrator }), { migrationsFolder });
    await migrator`select pg_advisory_unlock(${migrationLockKey})`;
  } finally {
    await migrator.end();
  }
  const client = postgres(url, {
    max: options.poolSize ?? 10,
    onnotice: () => {},
    connect_timeout: connectTimeoutSeconds,
    connection: { statement_timeout: statementTimeoutMs },
  });
  const db = drizzlePostgres({ client, schema });
  options.logger.info({ database: redactUrl(url) }, 'database ready (postgres)');
  return {
    db,
    kind: 'postgres',
    location: redactUrl(url),
    ping: (timeoutMs) => pingWithin(() => db.execute(sql`select 1`), timeoutMs),
    postgresClient: client,
    close: () => client.end({ timeout: 5 }),
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
  if (inMemory) {
    client = new PGlite();
  } else {
    const directory = resolve(dataDir);
    mkdirSync(directory, { recursive: true });
    releaseLock = takeLock(join(directory, 'butler.lock'));
    location = join(directory, 'pglite');
    client = new PGlite(location);
  }
  // The first start creates the embedded database: several seconds with nothing else to show.
  logger.info({ database: location }, 'opening the embedded database and applying migrations');
  try {
    const db = drizzlePglite({ client, schema });
    await migratePglite(db, { migrationsFolder });
    logger.info({ database: location }, 'database ready (embedded PGlite)');
    return {
      db,
      kind: 'pglite',
      location,
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
