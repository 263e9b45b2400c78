import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { silentLogger } from '../../src/core/contracts/logger.js';
import { type OpenDatabase, openDatabase } from '../../src/storage/database.js';

/**
 * A fresh, migrated database per call: a new Postgres database on the TEST_DATABASE_URL server
 * (so test files running in parallel never share tables), else an in-memory PGlite.
 */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const databaseKind = testDatabaseUrl ? 'postgres' : 'pglite';

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

export async function openTestDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) {
    const database = await openDatabase({ url: undefined, dataDir: 'memory://', logger: silentLogger });
    return { ...database, url: undefined };
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
