import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { inject } from 'vitest';
import { silentLogger } from '../../src/core/contracts/logger.js';
import { type OpenDatabase, openDatabase } from '../../src/storage/database.js';

/**
 * A fresh, migrated database per call: a new Postgres database on the TEST_DATABASE_URL server
 * (so test files running in parallel never share tables), else a PGlite copied from the run's template.
 */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
/**
 * A transaction pooler (PgBouncer) in front of the TEST_DATABASE_URL server (tests/pgbouncer/start.sh): with it
 * set, the Butlers the tests start reach their database through it, and the server directly for migrations
 * and LISTEN (DATABASE_DIRECT_URL), as on a managed Postgres.
 */
export const testPoolerUrl = (testDatabaseUrl && process.env.TEST_POOLER_URL) || undefined;
export const databaseKind = testDatabaseUrl
  ? testPoolerUrl
    ? 'postgres behind pgbouncer'
    : 'postgres'
  : 'pglite';

/** `databaseUrl` (a database on the test server) behind the pooler, same database name. */
export function pooledUrl(databaseUrl: string): string {
  if (!testPoolerUrl) throw new Error('TEST_POOLER_URL is not set');
  const pooled = new URL(testPoolerUrl);
  pooled.pathname = new URL(databaseUrl).pathname;
  return pooled.toString();
}

/** The environment that points a Butler at `databaseUrl`: through the pooler when there is one. */
export function databaseEnv(databaseUrl: string | undefined): Record<string, string> {
  if (!databaseUrl) return {};
  if (!testPoolerUrl) return { DATABASE_URL: databaseUrl };
  return { DATABASE_URL: pooledUrl(databaseUrl), DATABASE_DIRECT_URL: databaseUrl };
}

export interface TestDatabase extends OpenDatabase {
  /** Connection string of the fresh Postgres database (undefined on PGlite). */
  url: string | undefined;
}

/** Creates an empty database on the test server and returns its URL (Postgres only). */
export async function createPostgresDatabase(): Promise<string> {
  if (!testDatabaseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `butler_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(testDatabaseUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropPostgresDatabase(url: string): Promise<void> {
  if (!testDatabaseUrl) return;
  const name = new URL(url).pathname.slice(1);
  const admin = postgres(testDatabaseUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * Makes `dataDir` (a Butler data directory) hold a migrated PGlite database unless it holds one
 * already: a copy of the run's template (tests/global-setup.ts), much cheaper than creating one.
 */
export function seedPgliteDirectory(dataDir: string): string {
  // Benchmarks start Butlers with this helper outside vitest: they create their databases.
  const template = process.env.VITEST ? inject('pgliteTemplate') : undefined;
  const target = join(dataDir, 'pglite');
  if (template && !existsSync(target)) cpSync(template, target, { recursive: true });
  return dataDir;
}

export async function openTestDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    const dataDir = seedPgliteDirectory(mkdtempSync(join(tmpdir(), 'butler-db-')));
    const database = await openDatabase({ url: undefined, dataDir, logger: silentLogger });
    return {
      ...database,
      url: undefined,
      close: async () => {
        await database.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const url = await createPostgresDatabase();
  const database = await openDatabase({ url, dataDir: '', logger: silentLogger, poolSize: 5 });
  return {
    ...database,
    url,
    close: async () => {
      await database.close();
      await dropPostgresDatabase(url);
    },
  };
}
