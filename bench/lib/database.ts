import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/**
 * A fresh Postgres database per benchmark run, on the server at BENCH_DATABASE_URL (default: the local
 * test server), dropped afterwards.
 */
export const benchServerUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

async function withAdmin<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(benchServerUrl, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function createBenchDatabase(): Promise<string> {
  const name = `butler_bench_${randomBytes(5).toString('hex')}`;
  await withAdmin((sql) => sql.unsafe(`create database ${name}`));
  const url = new URL(benchServerUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropBenchDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^butler_bench_[0-9a-f]+$/.test(name)) throw new Error(`refusing to drop ${name}`);
  await withAdmin((sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
}

export async function postgresVersion(): Promise<string> {
  try {
    return await withAdmin(async (sql) => {
      const [row] = await sql<{ server_version: string }[]>`show server_version`;
      return row?.server_version ?? 'unknown';
    });
  } catch (error) {
    return `unreachable (${(error as Error).message})`;
  }
}

/** Runs one query against a benchmark database and returns its rows. */
export async function query<T extends Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(text)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Creates a database, runs `work` with its URL, and drops it whatever happens. */
export async function withBenchDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const url = await createBenchDatabase();
  try {
    return await work(url);
  } finally {
    await dropBenchDatabase(url).catch((error: unknown) =>
      console.error(`could not drop ${url}: ${(error as Error).message}`),
    );
  }
}
