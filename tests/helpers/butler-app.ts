import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inArray, sql } from 'drizzle-orm';
import { type Butler, createButler } from '../../src/app/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { ChatAdapter } from '../../src/core/contracts/adapter.js';
import { silentLogger } from '../../src/core/contracts/logger.js';
import { createLogger } from '../../src/observability/logger.js';
import { platformConnectors } from '../../src/platform-connectors.js';
import { inboundEvents } from '../../src/storage/schema.js';
import {
  createPostgresDatabase,
  databaseEnv,
  dropPostgresDatabase,
  seedPgliteDirectory,
  testDatabaseUrl,
} from './database.js';

/**
 * Starts the real Butler (config, database, worker, adapters, HTTP server) for an integration test.
 * Only the platforms' and the model's servers are fakes: point SLACK_API_URL, FEISHU_DOMAIN and
 * BUTLER_BASE_URL at them through `env`. The database is a fresh Postgres database when
 * TEST_DATABASE_URL is set, else an embedded PGlite (its own, or in `dataDir` to survive restarts).
 */

export interface TestButlerOptions {
  /** Environment variables, as a user would set them (e.g. SLACK_BOT_TOKEN, BUTLER_BASE_URL). */
  env?: Record<string, string>;
  /** The config file's content (written to a temporary JSON file). */
  config?: Record<string, unknown>;
  /** Reuse a database across restarts: a Postgres URL from an earlier TestButler... */
  databaseUrl?: string;
  /** ...or a PGlite directory. */
  dataDir?: string;
  /** Reach the database directly even when the tests run behind a pooler (a test that cuts the connection). */
  direct?: boolean;
  /** In-process adapters (the terminal chat). */
  adapters?: ChatAdapter[];
  /** Log at this level instead of staying silent (to stderr unless `logDestination` is given). */
  logLevel?: string;
  logDestination?: NodeJS.WritableStream;
}

export interface TestButler {
  butler: Butler;
  /** Base URL of the HTTP server, e.g. http://127.0.0.1:43121 */
  url: string;
  /** Postgres URL of this Butler's database (undefined on PGlite). */
  databaseUrl: string | undefined;
  /** Resolves once every accepted event is finished and no turn is running. */
  /**
   * Waits until no event is open and no turn runs; with `cosmetic` (the default) also until the statuses turns
   * left behind reached the platform or were dropped.
   */
  settle(timeoutMs?: number, options?: { cosmetic?: boolean }): Promise<void>;
  /** Stops Butler but keeps the database (for restart tests). */
  stop(): Promise<void>;
  /** Stops Butler and drops a database this helper created. */
  close(): Promise<void>;
}

/** Fast polling and short leases, so tests do not wait on production timings. */
const testWorker = { pollMilliseconds: 20, leaseSeconds: 5, sweepMilliseconds: 200, concurrency: 4 };

export async function startTestButler(options: TestButlerOptions = {}): Promise<TestButler> {
  const directory = mkdtempSync(join(tmpdir(), 'butler-test-'));
  const configPath = join(directory, 'butler.config.json');
  const fileConfig = { ...options.config, worker: { ...testWorker, ...(options.config?.worker as object) } };
  writeFileSync(configPath, JSON.stringify(fileConfig));

  const ownsDatabase = testDatabaseUrl !== undefined && options.databaseUrl === undefined;
  const databaseUrl = options.databaseUrl ?? (testDatabaseUrl ? await createPostgresDatabase() : undefined);
  const env: Record<string, string> = {
    PORT: '0',
    LOG_LEVEL: 'silent',
    BUTLER_CONFIG: configPath,
    ...(options.direct && databaseUrl ? { DATABASE_URL: databaseUrl } : databaseEnv(databaseUrl)),
    ...options.env,
  };
  const { config } = loadConfig(env, directory);
  const logger = options.logLevel
    ? createLogger({
        level: options.logLevel,
        serviceName: 'butler-test',
        destination: options.logDestination ?? process.stderr,
      })
    : silentLogger;
  const butler = await createButler(config, {
    logger,
    listen: true,
    connectors: platformConnectors(config, logger),
    ...(options.adapters ? { adapters: options.adapters } : {}),
    dataDir: seedPgliteDirectory(options.dataDir ?? join(directory, 'data')),
  });
  await butler.start();

  const settle = async (timeoutMs = 10_000, { cosmetic = true }: { cosmetic?: boolean } = {}) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await butler.database.db
        .select({ open: sql<number>`count(*)::int` })
        .from(inboundEvents)
        .where(inArray(inboundEvents.status, ['pending', 'claimed']));
      if ((row?.open ?? 0) === 0) {
        await butler.worker.whenIdle({ cosmetic });
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`Butler did not settle within ${timeoutMs} ms (${row?.open} open events)`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await butler.stop(5_000);
  };
  return {
    butler,
    url: `http://127.0.0.1:${butler.port}`,
    databaseUrl,
    settle,
    stop,
    close: async () => {
      await stop();
      if (ownsDatabase && databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
